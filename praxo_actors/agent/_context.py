"""What a callback may know of the run that called it: :func:`tool_context`, :func:`model_context`.

The driver that performs a ``CallTool`` or ``CallModel`` effect makes the effect's context
current while the callback runs (for an ``async def`` callback, for as long as it is awaited),
so a tool handler or a model needs no extra parameter to learn its run, its call's stable
idempotency key, or to stream text as ``model.delta`` events.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import msgspec

from praxo_actors.models import Event

if TYPE_CHECKING:
    from praxo_actors.agent._emit import Emit

__all__ = ["ModelContext", "ToolContext", "model_context", "tool_context"]


class ToolContext(msgspec.Struct, frozen=True):
    """The call a tool handler is serving.

    ``idempotency_key`` is the same on every attempt of one call (a durable run that resumes
    after a crash invokes an ``at_least_once`` tool again with ``attempt`` one higher), so a
    handler can pass it to the service it calls and have a repeat ignored there.
    """

    run_id: str
    session_id: str
    call_id: str | None
    idempotency_key: str
    attempt: int = 1


class ModelContext:
    """The model call in progress: its run, session and step, and a way to stream text.

    :meth:`delta` emits a ``model.delta`` event (``data``: ``step``, ``text``) at once, between
    the step's ``model.requested`` and ``model.responded``. Without a sink (or, under the
    runtime, without subscribers) a run builds no events and :meth:`delta` does nothing.
    """

    __slots__ = ("_event", "_pending", "_publish", "run_id", "session_id", "step")

    def __init__(
        self,
        run_id: str,
        session_id: str,
        step: int,
        event: Callable[[str, dict[str, Any]], Emit] | None = None,
        publish: Callable[[Event], Any] | None = None,
    ) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.step = step
        self._event = event
        self._publish = publish
        self._pending: list[Any] | None = None

    def publishing(self, publish: Callable[[Event], Any]) -> ModelContext:
        """Return this context with events delivered by ``publish`` (a driver's own channel)."""
        return ModelContext(self.run_id, self.session_id, self.step, self._event, publish)

    def delta(self, text: str) -> None:
        """Emit ``text`` as a ``model.delta`` event of this step (a no-op without events)."""
        if not isinstance(text, str):
            raise TypeError(f"a delta must be str, not {type(text).__name__}")
        if self._event is None or not text:
            return
        emit = self._event("model.delta", {"step": self.step, "text": text})
        publish = self._publish or emit.sink
        delivered = publish(emit.event)
        if inspect.isawaitable(delivered):  # an async sink under arun_agent
            import asyncio

            if self._pending is None:
                self._pending = []
            self._pending.append(asyncio.ensure_future(delivered))

    async def settle(self) -> None:
        """Wait for deltas handed to an ``async`` sink (the driver does, after the call)."""
        pending, self._pending = self._pending, None
        for task in pending or ():
            await task


_TOOL: ContextVar[ToolContext | None] = ContextVar("praxo_tool_context", default=None)
_MODEL: ContextVar[ModelContext | None] = ContextVar("praxo_model_context", default=None)


def tool_context() -> ToolContext | None:
    """Return the context of the tool call being served, or None outside a tool handler."""
    return _TOOL.get()


def model_context() -> ModelContext | None:
    """Return the context of the model call in progress, or None outside a model call."""
    return _MODEL.get()


def enter_tool(context: ToolContext | None) -> Any:
    """Make ``context`` current (a driver's call); return the token for :func:`leave_tool`."""
    return _TOOL.set(context)


def leave_tool(token: Any) -> None:
    _TOOL.reset(token)


def enter_model(context: ModelContext | None) -> Any:
    """Make ``context`` current (a driver's call); return the token for :func:`leave_model`."""
    return _MODEL.set(context)


def leave_model(token: Any) -> None:
    _MODEL.reset(token)
