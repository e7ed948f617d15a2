"""Agent factories the cluster fault suite registers by import path (Ray workers import them)."""

from __future__ import annotations

import asyncio
from typing import Any

from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant

THINK_SECONDS = 0.01  # each model call waits this long: a session is busy, a host is not idle
WORK_SECONDS = 0.05  # the durable agent's tool: long enough that a fault finds runs inside it


async def _echo(request: Request) -> Response:
    await asyncio.sleep(THINK_SECONDS)
    return Response(message_assistant(f"echo: {request.messages[-1].content}"))


def echo() -> AgentOptions:
    """Answer ``echo: <input>`` after a short wait."""
    return new_agent_options(_echo)


async def _worker(request: Request) -> Response:
    await asyncio.sleep(THINK_SECONDS)
    last = request.messages[-1]
    if last.role == "user":
        return Response(message_assistant("", [ToolCall("work", {"text": last.content})]))
    return Response(message_assistant(f"done: {last.content}"))


async def _work(args: dict[str, Any]) -> str:
    await asyncio.sleep(WORK_SECONDS)
    return str(args["text"])


def worker() -> AgentOptions:
    """Call the tool ``work`` on the input, then answer ``done: <its result>`` (registered
    durable: its runs are journaled, and resume on another host when theirs dies)."""
    return new_agent_options(_worker, tools=[Tool("work", "", {}, _work)])
