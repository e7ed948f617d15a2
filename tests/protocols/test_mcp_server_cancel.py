"""Over streamable HTTP, an MCP client that cancels its call cancels the agent's run."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest
from _helpers import assert_no_new_threads
from _served import TIMEOUT, served
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.protocols import mcp_server
from praxo_actors.runtime import Runtime
from praxo_actors.testing import FunctionModel


def test_a_cancelled_call_cancels_its_run() -> None:
    """The client's cancellation reaches the run: its tool in flight is cancelled."""
    before = set(threading.enumerate())
    entered, cancelled = threading.Event(), threading.Event()

    async def hold(_arguments: dict[str, Any]) -> str:
        entered.set()
        try:
            await asyncio.Event().wait()  # only the run's cancellation ends this
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    def chat(request: Request) -> Response:
        if request.messages[-1].role == "tool":
            return Response(message_assistant("done"))
        return Response(message_assistant("", [ToolCall("hold", {}, id="h1")]))

    def options() -> Any:
        tool = Tool("hold", "Hold on.", {"type": "object"}, hold)
        return new_agent_options(FunctionModel(chat), tools=[tool])

    async def go(url: str) -> None:
        loop = asyncio.get_running_loop()
        async with (
            httpx.AsyncClient(timeout=TIMEOUT) as http,
            Client(streamable_http_client(url + "/mcp", http_client=http)) as client,
        ):
            call = asyncio.ensure_future(
                client.call_tool("holder", {"input": "go", "session_id": "c-1"})
            )
            assert await loop.run_in_executor(None, entered.wait, TIMEOUT)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert await loop.run_in_executor(None, cancelled.wait, TIMEOUT)

    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    try:
        runtime.register_agent("holder", options)
        server = mcp_server(runtime, ["holder"])
        with served(server.streamable_http_app(), lifespan="on") as url:
            asyncio.run(asyncio.wait_for(go(url), TIMEOUT * 2))
    finally:
        runtime.stop()
    assert_no_new_threads(before, TIMEOUT)
