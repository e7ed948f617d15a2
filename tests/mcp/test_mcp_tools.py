"""MCPTools against a real MCP server, over stdio and streamable HTTP: listing, calls, failures."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

import pytest
from conftest import SERVER, HTTPServer, stdio_tools

from praxo_actors.agent import ToolError, arun_agent, new_agent_options
from praxo_actors.core import validate_schema
from praxo_actors.mcp import MCPTools, MCPUnavailableError
from praxo_actors.models import ToolCall, session
from praxo_actors.testing import ScriptedModel

Open = Callable[..., MCPTools]
ORDER = {
    "customer": {"name": "Ada", "address": {"city": "Lyon", "postcode": "69001"}},
    "lines": [{"sku": "A1", "quantity": 2}, {"sku": "B2", "quantity": 3}],
}


def run(main: Callable[[], Any]) -> Any:
    """Run the coroutine function ``main`` on a new event loop; return its result."""
    return asyncio.run(main())


def test_the_servers_tools_are_listed_with_their_descriptions_and_schemas(open_tools: Open) -> None:
    """Each server tool becomes a Tool with the server's name, description and input schema."""

    async def main() -> None:
        async with open_tools() as mcp:
            tools = {tool.name: tool for tool in mcp.tools}
            assert list(tools)[:3] == ["add", "echo", "shout"]
            assert tools["add"].description == "Add two integers."
            assert tools["add"].parameters["required"] == ["a", "b"]
            assert tools["add"].parameters["properties"]["a"]["type"] == "integer"
            assert mcp.tools is not mcp.tools  # a copy each time: the caller may change it

    run(main)


def test_nested_object_schemas_are_kept_and_checked(open_tools: Open) -> None:
    """A schema of nested objects ($defs and $ref) validates good and bad arguments alike."""

    async def main() -> None:
        async with open_tools() as mcp:
            (place,) = [tool for tool in mcp.tools if tool.name == "place"]
            assert {"Order", "Customer", "Address", "Line"} <= set(place.parameters["$defs"])
            assert validate_schema(place.parameters, {"order": ORDER}) == []
            bad = {"order": {**ORDER, "lines": [{"sku": "A1", "quantity": 0}]}}
            errors = validate_schema(place.parameters, bad)
            assert [(e.path, e.keyword) for e in errors] == [("/order/lines/0/quantity", "minimum")]
            assert await place.handler({"order": ORDER}) == {
                "city": "Lyon",
                "items": 5,
                "skus": ["A1", "B2"],
            }

    run(main)


def test_text_is_a_str_and_structured_content_is_json(open_tools: Open) -> None:
    """Text content comes back as a str; structured content as its JSON value."""

    async def main() -> None:
        async with open_tools() as mcp:
            assert await mcp.call("shout", {"text": "hi"}) == "HI"
            assert await mcp.call("echo", {"text": "hi"}) == "hi"
            assert await mcp.call("add", {"a": 2, "b": 40}) == 42
            assert await mcp.call("pixel", {}) == [
                {"type": "image", "data": "iQ==", "mimeType": "image/png"}
            ]

    run(main)


def test_a_call_goes_through_the_agent_loop(open_tools: Open) -> None:
    """arun_agent calls the MCP tool the model asks for and sends its result back."""

    async def main() -> None:
        model = ScriptedModel(
            [ToolCall("place", {"order": ORDER}, id="c1"), ToolCall("add", {"a": 1, "b": 2}), "ok"]
        )
        async with open_tools() as mcp:
            options = new_agent_options(model.acall, tools=mcp.tools)
            result = await arun_agent(options, session("s"), "order")
        tool_messages = [m for m in result.session.messages if m.role == "tool"]
        assert [m.content for m in tool_messages] == [
            '{"city":"Lyon","items":5,"skus":["A1","B2"]}',
            "3",
        ]
        assert result.output == "ok" and result.tool_calls == 2
        assert [t.name for t in model.requests[0].tools][:2] == ["add", "echo"]

    run(main)


def test_an_is_error_result_is_tool_failed(open_tools: Open) -> None:
    """A tool that reports isError returns TOOL_FAILED with its text, to the model too."""

    async def main() -> None:
        model = ScriptedModel([ToolCall("fail", {"reason": "out of stock"}), "sorry"])
        async with open_tools() as mcp:
            failed = await mcp.call("fail", {"reason": "out of stock"})
            unknown = await mcp.call("nope", {})
            result = await arun_agent(
                new_agent_options(model.acall, tools=mcp.tools), session("s"), "go"
            )
        assert isinstance(failed, ToolError) and failed.code == "TOOL_FAILED"
        assert "out of stock" in failed.message
        assert isinstance(unknown, ToolError) and unknown.code == "TOOL_FAILED"
        (tool_message,) = [m for m in result.session.messages if m.role == "tool"]
        assert '"code":"TOOL_FAILED"' in str(tool_message.content)
        assert "out of stock" in str(tool_message.content)

    run(main)


def test_a_server_that_dies_mid_call_is_unavailable(open_tools: Open) -> None:
    """A server whose process ends during a call gives MCP_UNAVAILABLE, then and afterwards."""

    async def main() -> None:
        async with open_tools() as mcp:
            assert await mcp.call("echo", {"text": "alive"}) == "alive"
            died = await mcp.call("die", {})
            after = await mcp.call("echo", {"text": "again"})
            handler_after = await mcp.tools[0].handler({"a": 1, "b": 2})
        for error in (died, after, handler_after):
            assert isinstance(error, ToolError) and error.code == "MCP_UNAVAILABLE", error
        # The caller's task goes on: the dead transport ended only the connection's own task.
        assert asyncio.current_task() is not None and not asyncio.current_task().cancelling()

    run(main)


def test_a_server_killed_between_calls_is_unavailable(open_tools: Open) -> None:
    """SIGKILL to the server between calls: the next call is MCP_UNAVAILABLE, not a hang."""

    async def main() -> None:
        async with open_tools() as mcp:
            server_pid = await mcp.call("pid", {})
            assert isinstance(server_pid, int) and server_pid != os.getpid()
            os.kill(server_pid, signal.SIGKILL)
            outcome = await mcp.call("echo", {"text": "anyone?"})
        assert isinstance(outcome, ToolError) and outcome.code == "MCP_UNAVAILABLE"

    run(main)


def test_a_silent_server_is_unavailable_after_the_timeout(open_tools: Open) -> None:
    """A call that gets no answer within timeout is MCP_UNAVAILABLE; the server stays usable."""

    async def main() -> None:
        async with open_tools(timeout=0.5) as mcp:
            silent = await mcp.call("slow", {"seconds": 30})
            assert await mcp.call("echo", {"text": "still here"}) == "still here"
        assert isinstance(silent, ToolError) and silent.code == "MCP_UNAVAILABLE"
        assert "no answer" in silent.message

    run(main)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_refused_connection_is_unavailable(no_thread_leaks: None) -> None:
    """Opening an HTTP server that is not there raises MCP_UNAVAILABLE, bounded."""

    async def main() -> None:
        with pytest.raises(MCPUnavailableError) as info:
            async with MCPTools.http(f"http://127.0.0.1:{_closed_port()}/mcp", connect_timeout=10):
                pass
        assert info.value.code == "MCP_UNAVAILABLE"
        assert "ConnectError" in info.value.message

    run(main)


def test_a_server_that_cannot_start_is_unavailable(no_thread_leaks: None) -> None:
    """A stdio command that exits at once, or does not exist, raises MCP_UNAVAILABLE."""

    async def main() -> None:
        for tools in (
            MCPTools.stdio(sys.executable, ["-c", "pass"], connect_timeout=10),
            MCPTools.stdio("/nonexistent/mcp-server", connect_timeout=10),
        ):
            with pytest.raises(MCPUnavailableError) as info:
                async with tools:
                    pass
            assert info.value.code == "MCP_UNAVAILABLE"

    run(main)


def test_tools_need_an_open_connection(no_thread_leaks: None) -> None:
    """Before async with, .tools raises and a call returns MCP_UNAVAILABLE; it opens once."""
    tools = stdio_tools()
    with pytest.raises(MCPUnavailableError):
        _ = tools.tools
    outcome = run(lambda: tools.call("echo", {"text": "x"}))
    assert isinstance(outcome, ToolError) and outcome.code == "MCP_UNAVAILABLE"
    with pytest.raises(ValueError, match="timeout"):
        MCPTools.stdio(sys.executable, timeout=0)
    with pytest.raises(ValueError, match="connect_timeout"):
        MCPTools.http("http://127.0.0.1:1/mcp", connect_timeout=-1)


def test_headers_reach_an_http_server(http_server: HTTPServer, no_thread_leaks: None) -> None:
    """MCPTools.http sends the headers given (a server that checks them sees them)."""

    async def main() -> None:
        async with MCPTools.http(http_server.url, {"Authorization": "Bearer t"}) as mcp:
            assert await mcp.call("echo", {"text": "h"}) == "h"

    run(main)


@pytest.mark.parametrize("code", [-32000, -32603])
def test_a_json_rpc_error_from_a_live_server_is_tool_failed(open_tools: Open, code: int) -> None:
    """A JSON-RPC error answered by a live server — -32000 included, the code the SDK also
    uses for a closed connection — is TOOL_FAILED, and the server stays usable."""

    async def main() -> None:
        async with open_tools() as mcp:
            refused = await mcp.call("refuse", {"code": code})
            assert await mcp.call("echo", {"text": "still here"}) == "still here"
        assert isinstance(refused, ToolError) and refused.code == "TOOL_FAILED", refused
        assert "refused by the server" in refused.message

    run(main)


# A stdio "server" that never initialises: it writes its pid, then ignores its stdin closing
# and SIGTERM, so the SDK's shutdown of it takes its whole grace (2 s + 2 s, then SIGKILL).
_MUTE = (
    "import os, signal, sys, threading\n"
    "with open(sys.argv[1], 'w') as f: f.write(str(os.getpid()))\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "threading.Event().wait(120)\n"
)


def test_connect_timeout_bounds_open_as_a_whole(tmp_path: Any, no_thread_leaks: None) -> None:
    """Against a server that never initialises, open() fails MCP_UNAVAILABLE at
    ``connect_timeout`` without waiting for the server's shutdown, which goes on on the loop
    and ends the server's process."""
    pid_file = tmp_path / "pid"

    async def main() -> int:
        tools = MCPTools.stdio(sys.executable, ["-c", _MUTE, str(pid_file)], connect_timeout=0.5)
        with pytest.raises(MCPUnavailableError) as info:
            async with tools:
                pass
        assert info.value.code == "MCP_UNAVAILABLE" and "no answer" in info.value.message
        pid = int(pid_file.read_text())
        os.kill(pid, 0)  # still alive: open() did not wait out its shutdown
        return pid

    pid = run(main)  # asyncio.run waits for the shutdown task: the process is gone after it
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


_CHILD = """
import asyncio, sys
from praxo_actors.mcp import MCPTools

async def main():
    async with MCPTools.stdio(sys.executable, [sys.argv[1]], timeout=30) as mcp:
        assert await mcp.call("echo", {"text": "x"}) == "x"
        await mcp.call("die", {})
    try:
        async with MCPTools.stdio(sys.executable, ["-c", "pass"], connect_timeout=10):
            pass
    except Exception:
        pass

asyncio.run(main())
"""


def test_nothing_is_written_to_stdout(no_thread_leaks: None) -> None:
    """A process using MCPTools — connections that end, servers that die or cannot start —
    writes nothing to its stdout (a host that is itself a stdio MCP server speaks there)."""
    import subprocess

    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(SERVER)],
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert child.returncode == 0, child.stderr.decode()
    assert child.stdout == b""
