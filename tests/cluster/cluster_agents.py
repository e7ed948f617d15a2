"""Agent factories the cluster tests register by import path (Ray workers import them)."""

from __future__ import annotations

import asyncio
from typing import Any

from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant


async def _echo(request: Request) -> Response:
    return Response(message_assistant(f"echo: {request.messages[-1].content}"))


def echo() -> AgentOptions:
    return new_agent_options(_echo)


async def _slow(request: Request) -> Response:
    last = request.messages[-1]
    if last.role == "user":
        return Response(message_assistant("", [ToolCall("work", {"text": last.content})]))
    return Response(message_assistant(f"done: {last.content}"))


async def _work(args: dict[str, Any]) -> str:
    await asyncio.sleep(0.2)  # slow work, so that a host dies while runs are in flight
    return str(args["text"])


def slow() -> AgentOptions:
    return new_agent_options(_slow, tools=[Tool("work", "", {}, _work)])


def _mailing(request: Request) -> Response:
    if request.step == 1:
        return Response(message_assistant("", [ToolCall("send", {"to": "ada"}, id="c1")]))
    return Response(message_assistant(f"result: {request.messages[-1].content}"))


def approving() -> AgentOptions:
    """An agent whose ``send`` tool waits for a person's approval."""
    from praxo_actors.middleware import require_approval

    tool = Tool("send", "", {}, lambda args: f"sent to {args['to']}")
    return new_agent_options(_mailing, tools=[tool], approval=require_approval(["send"]))
