"""An MCP tool's annotations and output schema on its Tool; approval of destructive tools;
where a stdio server's stderr goes."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from conftest import TIMEOUT

from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.mcp import MCPTools
from praxo_actors.middleware import require_approval
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.testing import FunctionModel

SERVER = Path(__file__).with_name("_annotated_server.py")


def annotated(**options: object) -> MCPTools:
    return MCPTools.stdio(sys.executable, [str(SERVER)], timeout=TIMEOUT, **options)  # type: ignore[arg-type]


def calls(request: Request) -> Response:
    """Call the tool the user names (with fixed arguments), then say its result."""
    last = request.messages[-1]
    if last.role == "tool":
        return Response(message_assistant(f"done: {last.content}"))
    arguments = {"reset": {"to": "HEAD~1"}, "commit": {"message": "m"}, "plain": {"text": "t"}}
    name = last.content
    return Response(message_assistant("", [ToolCall(name, arguments.get(name, {}), id="c1")]))


def test_annotations_and_output_schema_are_on_the_tools(no_thread_leaks: None) -> None:
    """Each Tool carries the server's annotations under their MCP names, and its output schema."""

    async def main() -> dict[str, Tool]:
        with open(os.devnull, "w") as devnull:
            async with annotated(stderr=devnull) as mcp:
                return {t.name: t for t in mcp.tools}

    tools = asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    assert tools["status"].annotations == {"readOnlyHint": True, "title": "Show the status"}
    assert tools["reset"].annotations == {"readOnlyHint": False, "destructiveHint": True}
    assert tools["plain"].annotations is None
    schema = tools["status"].output_schema
    assert schema is not None and set(schema["properties"]) == {"branch", "clean"}
    assert tools["plain"].output_schema is None


def test_require_approval_destructive_gates_only_destructive_tools(no_thread_leaks: None) -> None:
    """require_approval(destructive=True) stops before a destructive tool, not the others."""

    async def main() -> dict[str, str]:
        statuses: dict[str, str] = {}
        with open(os.devnull, "w") as devnull:
            async with (
                annotated(stderr=devnull) as mcp,
                Runtime.open(idle_timeout=None, timeout=TIMEOUT) as rt,
            ):
                gate = require_approval(destructive=True)
                rt.register_agent(
                    "default",
                    lambda: new_agent_options(FunctionModel(calls), tools=mcp.tools, approval=gate),
                )
                for name in ("reset", "commit", "status", "plain"):
                    result = await rt.session(name).arun(name)
                    statuses[name] = result.status
                    if name == "reset":
                        assert result.interrupt["approval"]["tool"] == "reset"
                        resumed = await rt.session(name).aresume(True)
                        assert resumed.output == "done: reset to HEAD~1"
        return statuses

    statuses = asyncio.run(asyncio.wait_for(main(), TIMEOUT * 2))
    assert statuses == {
        "reset": "interrupted",
        "commit": "completed",
        "status": "completed",
        "plain": "completed",
    }


def test_require_approval_keeps_its_names_and_checks_its_flag() -> None:
    """Named tools still wait; destructive must be a bool; a Tool without annotations is safe."""
    gate = require_approval(["add"], destructive=True)
    plain = Tool("add", "", {}, lambda a: 0)
    rm = Tool("rm", "", {}, lambda a: 0, annotations={"destructiveHint": True})
    read = Tool(
        "ls", "", {}, lambda a: 0, annotations={"destructiveHint": True, "readOnlyHint": True}
    )
    assert gate.requires("add", plain)
    assert gate.requires("rm", rm)
    assert not gate.requires("ls", read)
    assert not require_approval(["add"]).requires("rm", rm)
    with pytest.raises(TypeError):
        require_approval(destructive="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Tool("x", "", {}, lambda a: 0, annotations=["destructiveHint"])  # type: ignore[arg-type]


def test_stdio_stderr_goes_where_it_is_told(tmp_path: Path, no_thread_leaks: None) -> None:
    """stderr= receives what the server writes to its stderr."""
    log = tmp_path / "server.log"

    async def main() -> None:
        with log.open("w") as sink:
            async with annotated(stderr=sink) as mcp:
                assert len(mcp.tools) == 4

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    assert "annotated server: starting" in log.read_text()
    with pytest.raises(TypeError):
        MCPTools.stdio(sys.executable, [str(SERVER)], stderr="server.log")  # type: ignore[arg-type]
