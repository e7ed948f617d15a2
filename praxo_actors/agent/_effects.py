"""The effects the agent state machine yields, and the reply each one expects.

A driver performs an effect and sends its reply back into the run (see
:class:`~praxo_actors.agent.AgentRun`). Effects are frozen records; the callables they carry
are the user's, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from praxo_actors.agent._context import ModelContext, ToolContext
from praxo_actors.agent._emit import Emit
from praxo_actors.agent._tool import Tool
from praxo_actors.middleware._structured_output import CallRepairer
from praxo_actors.models import Message, Request, ToolCall

__all__ = [
    "BeginStep",
    "CallModel",
    "CallRepairer",
    "CallSummarizer",
    "CallTool",
    "Effect",
    "Emit",
]


class BeginStep(msgspec.Struct, frozen=True):
    """A step is about to start (``step`` counts from 1).

    Reply ``None`` to continue, or an error code (e.g. ``"AGENT_CANCELLED"``,
    ``"AGENT_DEADLINE"``) to fail the run with that code.
    """

    step: int


class CallModel(msgspec.Struct, frozen=True):
    """Call ``model(request)``; reply with its return value (awaited, if it is awaitable).

    For a :func:`~praxo_actors.agent.fallback_model`, the machine yields one ``CallModel`` per
    attempt, each naming the child to call. A driver makes ``context`` current while the model
    runs (see :func:`~praxo_actors.agent.model_context`).
    """

    model: Callable[[Request], Any]
    request: Request
    context: ModelContext | None = None


class CallTool(msgspec.Struct, frozen=True):
    """Call ``tool.handler(arguments)``; reply with its return value.

    ``arguments`` is the driver's to hand over: a copy of ``call.arguments``, so a handler that
    mutates it changes nothing recorded. A driver makes ``context`` current while the handler
    runs (see :func:`~praxo_actors.agent.tool_context`).
    """

    tool: Tool
    arguments: dict[str, Any]
    call: ToolCall
    context: ToolContext | None = None


class RefusedCall(msgspec.Struct, frozen=True):
    """A tool call refused before any handler ran: ``code`` says why; reply ``None``.

    Yielded only by a traced run, to the tracing layer, which makes the call's span and
    never passes it on: a driver never sees it.
    """

    call: ToolCall
    code: str
    message: str


class CallSummarizer(msgspec.Struct, frozen=True):
    """Call ``summarizer(messages)`` for compaction; reply with the summary text."""

    summarizer: Callable[[list[Message]], Any]
    messages: list[Message]


Effect = BeginStep | CallModel | CallTool | Emit | CallRepairer | CallSummarizer
"""Everything a run can ask its driver to do."""

Step = Effect | RefusedCall
"""What the agent machine yields: an :data:`Effect`, or (traced runs only, to the tracing
layer alone) a :class:`RefusedCall`."""
