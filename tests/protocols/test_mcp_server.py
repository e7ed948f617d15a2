"""The runtime's agents as an MCP server, driven by the mcp SDK's client over stdio and HTTP."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _helpers import assert_no_new_threads
from _served import TIMEOUT, served
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

import praxo_actors
from praxo_actors._errors import PraxoError
from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.models import ModelError, Request, Response, ToolCall, message_assistant
from praxo_actors.protocols import mcp_server
from praxo_actors.runtime import Runtime
from praxo_actors.testing import FunctionModel

CHILD = Path(__file__).with_name("_mcp_child.py")


def chat(request: Request) -> Response | ModelError:
    """Add when asked, fail on "fail"; else say what the model saw."""
    last = request.messages[-1]
    if last.role == "tool":
        return Response(message_assistant(f"Result: {last.content}."))
    if last.content == "fail":
        return ModelError("MODEL_UNAVAILABLE", "the model is down")
    if last.content == "add":
        return Response(message_assistant("", [ToolCall("add", {"a": 2, "b": 3}, id="c1")]))
    return Response(message_assistant(" | ".join(m.content for m in request.messages)))


def options() -> Any:
    add = Tool("add", "Add two numbers", {"type": "object"}, lambda a: a["a"] + a["b"])
    return new_agent_options(FunctionModel(chat), tools=[add])


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    """A runtime with the agents "echo" and "adder"; stopped after."""
    before = set(threading.enumerate())
    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    try:
        runtime.register_agent("echo", lambda: new_agent_options(FunctionModel(chat)))
        runtime.register_agent("adder", options)
        yield runtime
    finally:
        runtime.stop()
    assert_no_new_threads(before, TIMEOUT)


def test_stdio_serves_each_agent_as_a_tool() -> None:
    """A child process serves the runtime over stdio: list, call, go on in a session, fail."""
    root = str(Path(praxo_actors.__file__).parent.parent)  # this checkout, not an installed copy
    params = StdioServerParameters(
        command=sys.executable, args=[str(CHILD)], env={"PYTHONPATH": root}
    )

    async def go() -> None:
        async with Client(params) as client:
            listed = await client.list_tools()
            (tool,) = listed.tools
            assert tool.name == "echo"
            assert tool.input_schema["required"] == ["input"]
            assert set(tool.input_schema["properties"]) == {"input", "session_id"}
            assert tool.output_schema is not None and "output" in tool.output_schema["properties"]
            first = await client.call_tool("echo", {"input": "hello"})
            assert not first.is_error
            answer = first.structured_content
            assert answer is not None and answer["output"] == "hello"
            assert answer["status"] == "completed" and answer["run_id"]
            again = {"input": "again", "session_id": answer["session_id"]}
            second = await client.call_tool("echo", again)
            assert second.structured_content is not None
            assert second.structured_content["output"] == "hello | hello | again"
            failed = await client.call_tool("echo", {"input": "fail"})
            assert failed.is_error
            text = failed.content[0].text  # type: ignore[union-attr]
            assert text.endswith("MODEL_UNAVAILABLE: the model is down")
            hostile = await client.call_tool("echo", {"input": 5})
            assert hostile.is_error

    asyncio.run(asyncio.wait_for(go(), TIMEOUT * 3))


def test_streamable_http_on_loopback(runtime: Runtime) -> None:
    """Over streamable HTTP the tools run the agents, a tool call included; sessions go on."""
    server = mcp_server(runtime, ["adder"], name="praxo-test")

    async def go(url: str) -> None:
        async with (
            httpx.AsyncClient(timeout=TIMEOUT) as http,
            Client(streamable_http_client(url + "/mcp", http_client=http)) as client,
        ):
            assert [t.name for t in (await client.list_tools()).tools] == ["adder"]
            result = await client.call_tool("adder", {"input": "add", "session_id": "s-1"})
            assert result.structured_content is not None
            assert result.structured_content["output"] == "Result: 5."
            assert result.structured_content["session_id"] == "s-1"

    with served(server.streamable_http_app(), lifespan="on") as url:
        asyncio.run(asyncio.wait_for(go(url), TIMEOUT))
    assert [m.role for m in runtime.session("s-1", "adder").history()] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]


def test_the_http_app_refuses_a_foreign_host(runtime: Runtime) -> None:
    """A request naming another Host is 421 with a code, before the SDK sees it."""
    with served(mcp_server(runtime).streamable_http_app(), lifespan="on") as url:
        answer = httpx.post(
            url + "/mcp", headers={"Host": "evil.example"}, content=b"{}", timeout=TIMEOUT
        )
        assert answer.status_code == 421
        assert answer.json()["error"]["code"] == "PROTOCOL_HOST_REFUSED"
        junk = httpx.post(
            url + "/mcp",
            content=b"not json",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
            timeout=TIMEOUT,
        )
        assert 400 <= junk.status_code < 500


def test_allowed_hosts_replace_the_loopback_names(runtime: Runtime) -> None:
    """With allowed_hosts the named host is served (by the SDK too) and loopback is refused."""
    server = mcp_server(runtime, ["echo"], allowed_hosts=["agents.example"])

    async def go(url: str) -> None:
        headers = {"Host": "agents.example"}
        async with (
            httpx.AsyncClient(timeout=TIMEOUT, headers=headers) as http,
            Client(streamable_http_client(url + "/mcp", http_client=http)) as client,
        ):
            called = await client.call_tool("echo", {"input": "hi"})
            assert called.structured_content is not None

    with served(server.streamable_http_app(), lifespan="on") as url:
        asyncio.run(asyncio.wait_for(go(url), TIMEOUT))
        refused = httpx.post(url + "/mcp", content=b"{}", timeout=TIMEOUT)
        assert refused.status_code == 421
        assert refused.json()["error"]["code"] == "PROTOCOL_HOST_REFUSED"


def test_unknown_and_unnamable_agents_are_refused(runtime: Runtime) -> None:
    """Naming an agent not registered, or one no MCP tool can be named, raises with a code."""
    with pytest.raises(PraxoError) as unknown:
        mcp_server(runtime, ["nobody"])
    assert unknown.value.code == "RUNTIME_UNKNOWN_AGENT"
    runtime.register_agent("has space", options)
    with pytest.raises(PraxoError) as bad:
        mcp_server(runtime)
    assert bad.value.code == "RUNTIME_INVALID_INPUT"
    with pytest.raises(PraxoError) as not_runtime:
        mcp_server(object())  # type: ignore[arg-type]
    assert not_runtime.value.code == "RUNTIME_INVALID_INPUT"


def test_mounted_beside_the_a2a_app(runtime: Runtime) -> None:
    """The MCP HTTP app and the A2A app, mounted in one app, each answer their own clients."""
    import contextlib

    from a2a.client import ClientConfig, create_client
    from a2a.helpers.proto_helpers import new_message, new_text_part
    from a2a.types import Role, SendMessageRequest, TaskState
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from praxo_actors.protocols import a2a_app

    server = mcp_server(runtime, ["echo"])

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> Any:
        async with server.session_manager.run():
            yield

    app = Starlette(
        routes=[
            Mount("/tools", server.streamable_http_app()),
            Mount("/a2a", a2a_app(runtime, agent="echo")),
        ],
        lifespan=lifespan,
    )

    async def go(url: str) -> None:
        async with (
            httpx.AsyncClient(timeout=TIMEOUT) as http,
            Client(streamable_http_client(url + "/tools/mcp", http_client=http)) as client,
        ):
            called = await client.call_tool("echo", {"input": "over mcp", "session_id": "both"})
            assert called.structured_content is not None
            config = ClientConfig(streaming=False, httpx_client=http)
            a2a = await create_client(url + "/a2a", client_config=config)
            message = new_message(
                [new_text_part("over a2a")], context_id="both", role=Role.ROLE_USER
            )
            [answer] = [
                item async for item in a2a.send_message(SendMessageRequest(message=message))
            ]
            assert answer.task.status.state == TaskState.TASK_STATE_COMPLETED
            text = answer.task.artifacts[0].parts[0].text
            assert text == "over mcp | over mcp | over a2a"  # one session, two protocols

    with served(app, lifespan="on") as url:
        asyncio.run(asyncio.wait_for(go(url), TIMEOUT))
