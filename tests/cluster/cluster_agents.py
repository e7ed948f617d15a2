"""Agent factories the cluster tests register by import path (Ray workers import them)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from praxo_actors.agent import AgentOptions, Tool, new_agent_options, tool_context
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


async def _held(request: Request) -> Response:
    last = request.messages[-1]
    if last.role == "user":
        return Response(message_assistant("", [ToolCall("hold", {"flag": last.content})]))
    return Response(message_assistant(f"held: {last.content}"))


async def _hold(args: dict[str, Any]) -> str:
    context = tool_context()
    if context is not None and context.attempt == 1:
        # The first attempt waits (bounded) until the test creates the flag file: by then
        # another host has resumed this run and committed it.
        flag = Path(str(args["flag"]))
        for _ in range(6000):
            if flag.exists():
                break
            await asyncio.sleep(0.01)
    return "attempt 1" if context is None or context.attempt == 1 else "attempt 2"


def held() -> AgentOptions:
    """Call ``hold`` on the input (a flag file's path): the first attempt of the call waits for
    the file, a resumed one returns at once."""
    return new_agent_options(_held, tools=[Tool("hold", "", {}, _hold)])
