"""Agents ``bench/cluster.py`` and ``bench/store_faults.py`` register by import path (the
hosts, Ray workers, import them)."""

from __future__ import annotations

import time

from praxo_actors.agent import AgentOptions, new_agent_options
from praxo_actors.models import Request, Response, message_assistant

#: CPU each call of the busy model spends, seconds of pure Python (it holds the GIL).
BUSY_SECONDS = 0.002


async def _zero(_request: Request) -> Response:
    return Response(message_assistant("ok"))


def zero() -> AgentOptions:
    """Answer at once: what is measured is the path of a run, not the model."""
    return new_agent_options(_zero)


async def _echo(request: Request) -> Response:
    return Response(message_assistant(f"echo: {request.messages[-1].content}"))


def echo() -> AgentOptions:
    """Answer with the input, so that a caller can tell its run's answer."""
    return new_agent_options(_echo)


def _busy(_request: Request) -> Response:
    end = time.thread_time() + BUSY_SECONDS
    while time.thread_time() < end:
        pass
    return Response(message_assistant("ok"))


def busy() -> AgentOptions:
    """A CPU-bound scripted model (a plain ``def``: it runs on the host's I/O pool)."""
    return new_agent_options(_busy)
