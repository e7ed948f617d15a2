"""Decide what each effect of the agent loop asks for; a driver only waits for it.

Every driver — :func:`~praxo_actors.agent.run_agent`, :func:`~praxo_actors.agent.arun_agent`,
their journaled forms, and the runtime's session actor — hands each effect to :func:`decide`,
which says what its answer is:

- :class:`Reply`: answered at once (a ``BeginStep``, an ``Emit`` the journal replays, or a call
  the journal holds); with ``record`` set, the reply is journaled before the run is sent it (an
  ``at_most_once`` tool cut off mid-call);
- :class:`~praxo_actors.agent.Emit`: an event to deliver (maybe renumbered), then reply ``None``;
- :class:`Call`: a model, tool, repairer or summariser to call, with the context variable to set
  while it runs and what to journal before (``started``) and after (``journaled``).

A driver then calls (:func:`call_now`), awaits (:func:`call_async`) or starts the call without
waiting, and feeds the outcome back through :func:`outcome` when the run is journaled.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Protocol, assert_never

import msgspec

from praxo_actors._errors import AgentError
from praxo_actors.agent._context import _MODEL, _TOOL, ModelContext, ToolContext
from praxo_actors.agent._effects import (
    BeginStep,
    CallModel,
    CallRepairer,
    CallSummarizer,
    CallTool,
    Effect,
    Emit,
)
from praxo_actors.agent._tool import TOOL_RETRY, ToolError, ToolRetry
from praxo_actors.codes import AGENT_UNKNOWN_EFFECT
from praxo_actors.models import Event

__all__ = [
    "INTERRUPTED",
    "LIVE",
    "Call",
    "Decision",
    "Replayer",
    "Reply",
    "call_async",
    "call_now",
    "decide",
    "outcome",
    "publish_async",
    "publish_now",
]

LIVE = object()
"""What a replayer answers once its journal is replayed: perform this effect for real."""

INTERRUPTED = object()
"""What a replayer answers for an ``at_most_once`` tool in flight at the crash: not called again."""


class Replayer(Protocol):
    """A durable run's journal as :func:`decide` reads it."""

    @property
    def replaying(self) -> bool:
        """Whether effects are still answered from the journal."""
        ...

    def next_reply(self, effect: Effect) -> Any:
        """Return the journal's reply to ``effect``, :data:`LIVE` or :data:`INTERRUPTED`."""
        ...

    def emitted(self, event: Event) -> Event | None:
        """Return the event to deliver for one the run emitted (None: delivered before)."""
        ...

    def live_context(self, effect: Effect, context: Any) -> Any:
        """Return the context of a call made live (a repeat after a resume may say so)."""
        ...

    def interrupted(self) -> ToolError:
        """Return the result of an ``at_most_once`` call that was cut off."""
        ...


# Structs, not plain classes with __slots__: one is made per effect, and a Struct is made in a
# fifth of the time (0.09 µs against 0.45 µs for a Call, measured on the 2 shared cores).


class Reply(msgspec.Struct, frozen=True):
    """Answer the effect with ``value`` at once; ``record``: journal it first."""

    value: Any
    record: bool = False


class Call(msgspec.Struct, frozen=True):
    """Call ``fn(*args)`` with ``var`` set to ``value``; reply with what it returns.

    ``started``: journal the ``at_most_once`` marker before the call; ``journaled``: journal the
    outcome after it. ``settle``: the model context whose deltas an async driver awaits after.
    """

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    var: ContextVar[Any] | None = None
    value: Any = None
    started: bool = False
    journaled: bool = False
    settle: ModelContext | None = None


Decision = Reply | Emit | Call
"""What :func:`decide` says of one effect."""

_NONE = Reply(None)  # the common answer: shared, as a Reply is never changed


def decide(
    effect: Effect,
    journal: Replayer | None = None,
    stop: Callable[[], str | None] | None = None,
    deltas: Callable[[Event], Any] | None = None,
) -> Decision:
    """Decide what ``effect`` asks for.

    Args:
        effect: The run's current effect.
        journal: A durable run's journal: replays what it holds, says what to journal.
        stop: Gives a ``BeginStep``'s reply (a code to stop the run with, or None).
        deltas: Where a model's ``model.delta`` events go, instead of the run's sink.

    Raises:
        CheckpointError: A journal entry that is forged, broken, or for another effect.
        AgentError: ``AGENT_UNKNOWN_EFFECT`` for what is not an :data:`Effect`.
    """
    if isinstance(effect, BeginStep):
        return _NONE if stop is None else Reply(stop())
    if isinstance(effect, Emit):
        if journal is None:
            return effect  # the decision is the effect itself: deliver its event
        event = journal.emitted(effect.event)
        if event is None:
            return _NONE
        return effect if event is effect.event else Emit(effect.sink, event)
    if journal is None:
        # The hot path of run_agent, arun_agent and a session's run that is not durable (three
        # effects a step): the same decisions as below with fewer checks, which halves what
        # deciding adds to a step (from 7% to 3% over a driver with its own match, on
        # bench/agent_loop.py's scripted run).
        if isinstance(effect, CallTool):
            return Call(effect.tool.handler, (effect.arguments,), _TOOL, effect.context)
        if isinstance(effect, CallModel):
            context = effect.context
            if deltas is not None and context is not None and context._event is not None:
                context = context.publishing(deltas)
            return Call(effect.model, (effect.request,), _MODEL, context, False, False, context)
    if journal is not None and journal.replaying:
        reply = journal.next_reply(effect)
        if reply is INTERRUPTED:
            return Reply(journal.interrupted(), record=True)
        if reply is not LIVE:
            return Reply(reply)
    durable = journal is not None
    if isinstance(effect, CallTool):
        tool_context: ToolContext | None = effect.context
        if journal is not None:
            tool_context = journal.live_context(effect, tool_context)
        started = durable and effect.tool.delivery == "at_most_once"
        # Positional: keywords cost a Struct a fifth more, on run_agent's hottest line.
        return Call(effect.tool.handler, (effect.arguments,), _TOOL, tool_context, started, durable)
    if isinstance(effect, CallModel):
        context = effect.context
        if journal is not None:
            context = journal.live_context(effect, context)
        if deltas is not None and context is not None and context._event is not None:
            context = context.publishing(deltas)
        return Call(effect.model, (effect.request,), _MODEL, context, False, durable, context)
    if isinstance(effect, CallRepairer):
        return Call(effect.repairer, (effect.text, effect.errors), journaled=durable)
    if isinstance(effect, CallSummarizer):
        return Call(effect.summarizer, (effect.messages,), journaled=durable)
    try:
        assert_never(effect)
    except AssertionError:  # not an Effect: refused with a code
        raise AgentError(
            AGENT_UNKNOWN_EFFECT, f"no driver performs {type(effect).__name__}"
        ) from None


def outcome(effect: Effect | None, ok: bool, value: Any) -> tuple[bool, Any]:
    """Return the outcome to journal and send for a journaled call that ended ``(ok, value)``.

    A tool's raised :class:`~praxo_actors.agent.ToolRetry` is the result
    ``ToolError("TOOL_RETRY", message)``, as the loop takes it: journaled like any result, so a
    replay answers the call alike (an exception leaves no entry, and the replay would drift).
    """
    if not ok and isinstance(value, ToolRetry) and isinstance(effect, CallTool):
        return True, ToolError(TOOL_RETRY, value.message)
    return ok, value


def call_now(call: Call) -> Any:
    """Make ``call`` on this thread and return its reply.

    Raises:
        TypeError: The callback is ``async def`` (its coroutine is closed, never awaited).
        Exception: The callback's own, unchanged.
    """
    var = call.var
    if var is None:
        reply = call.fn(*call.args)
    else:
        token = var.set(call.value)
        try:
            reply = call.fn(*call.args)
        finally:
            var.reset(token)
    if type(reply) is types.CoroutineType:
        reply.close()  # never awaited: close it so no warning is left behind
        raise TypeError(f"an async callback needs arun_agent, not run_agent: {call.fn!r}")
    return reply


async def call_async(call: Call) -> Any:
    """Make ``call``, awaiting its reply if it is awaitable, with its context current throughout."""
    var = call.var
    token = None if var is None else var.set(call.value)
    try:
        reply = call.fn(*call.args)
        if type(reply) is types.CoroutineType or inspect.isawaitable(reply):
            reply = await reply
    finally:
        if var is not None and token is not None:
            var.reset(token)
        if call.settle is not None:
            await call.settle.settle()
    return reply


async def publish_async(step: Emit) -> Any:
    """Deliver an event to a sink that may be ``async def``."""
    reply = step.sink(step.event)
    if type(reply) is types.CoroutineType or inspect.isawaitable(reply):
        reply = await reply
    return reply


def publish_now(step: Emit) -> Any:
    """Deliver an event to a plain sink.

    Raises:
        TypeError: The sink is ``async def``.
    """
    reply = step.sink(step.event)
    if type(reply) is types.CoroutineType:
        reply.close()
        raise TypeError(f"an async sink needs arun_agent, not run_agent: {step.sink!r}")
    return reply
