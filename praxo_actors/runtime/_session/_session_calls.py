"""How a session actor performs its run's callbacks without waiting for them.

An ``async def`` callback starts as a task on the runtime's event loop; a plain one runs on the
runtime's I/O pool. Either way its outcome comes back to the session inside an ``EffectDone``
message (:class:`_Deliver`), and the callback's tool or model context is current while it runs.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from contextvars import ContextVar, copy_context
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
import pykka

from praxo_actors.agent import AgentRun
from praxo_actors.models import Event
from praxo_actors.runtime._protocol import Publish, RunDeadline, encode
from praxo_actors.runtime._session._durable import DurableRun
from praxo_actors.runtime._session._outcome import effect_done

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["CallbackSteps", "Run", "tell_deadline"]


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object whose __call__ is async def
    )


async def _await(value: Any) -> Any:
    return await value


@dataclass(slots=True)
class Run:
    run: AgentRun
    agent: str
    deadline_ns: int | None
    cancelled: bool = False
    keep: bool = False  # cancelled by newer input: commit the steps it completed
    token: int = 0
    task: Any = None  # the asyncio task of the async callback in flight, if any
    events: list[Event] | None = None  # made by the first event: most of a run's time, none
    durable: DurableRun | None = None
    # A durable run's next move, waiting for the store to acknowledge its journal write.
    held: tuple[Any, ...] | None = None

    def add_event(self, event: Event) -> None:
        """Queue an event to publish at the next callback or the end of the run."""
        if self.events is None:
            self.events = []
        self.events.append(event)


class _Deliver:
    """Send a callback's outcome to its session (from whichever thread the callback ran on)."""

    __slots__ = ("host", "ref", "run_id", "token")

    def __init__(
        self, host: SessionHost, ref: pykka.ActorRef[Any], run_id: str, token: int
    ) -> None:
        self.host = host
        self.ref = ref
        self.run_id = run_id
        self.token = token

    def __call__(self, ok: bool, value: Any) -> None:
        message = effect_done(self.run_id, self.token, ok, value)
        # A session that stopped meanwhile has had its runs settled already.
        with contextlib.suppress(pykka.ActorDeadError):
            self.ref.tell(message)
        # At the end of an async callback's task, on the loop: handle it in this same step.
        self.host.run_now()


class CallbackSteps:
    """The part of :class:`~praxo_actors.runtime._session._session.SessionActor` starting calls."""

    host: SessionHost
    actor_ref: pykka.ActorRef[Any]
    _next_token: int

    def _publish(self, current: Run) -> None:
        if current.events:
            events, current.events = current.events, None
            host = self.host
            if host.router.parents:  # a child run of an agent tool: say whose it is
                events = [_tagged(host, event) for event in events]
            host.post(host.router.count_events, len(events))
            if host.has_subscribers():
                host.bus_ref.tell(encode(Publish(events=events)))

    def _publish_delta(self, event: Event) -> None:
        """Deliver a model's ``model.delta`` at once (from the thread the model runs on)."""
        host = self.host
        host.post(host.router.count_events, 1)
        if host.router.parents:
            event = _tagged(host, event)
        host.bus_ref.tell(encode(Publish(events=[event])))

    def _dispatch(
        self,
        current: Run,
        fn: Callable[..., Any],
        *args: Any,
        var: tuple[ContextVar[Any], Any] | None = None,
    ) -> None:
        """Start a callback; its outcome returns inside an EffectDone message.

        ``var`` is a context variable to set while the callback runs (its tool or model context).
        """
        self._publish(current)
        self._next_token += 1
        token = current.token = self._next_token
        deliver = _Deliver(self.host, self.actor_ref, current.run.run_id, token)
        current.task = None
        if _is_async(fn):
            context = None
            if var is not None:
                context = copy_context()
                context.run(var[0].set, var[1])
            current.task = self.host.spawn(fn, args, deliver, context)
        else:
            self.host.io_pool.submit(
                _call_sync, (self.host, fn, args, deliver, var), _Finish(deliver)
            )


def _tagged(host: SessionHost, event: Event) -> Event:
    """``event`` with ``data["parent_session"]`` when its run is an agent tool's child run."""
    parent = host.router.parents.get(event.run_id)
    if parent is None:
        return event
    return msgspec.structs.replace(event, data={**event.data, "parent_session": parent})


_PENDING = object()


def tell_deadline(host: SessionHost, ref: pykka.ActorRef[Any], run_id: str) -> None:
    """A deadline timer fired (on the loop): tell the session, and let it act in this step."""
    with contextlib.suppress(pykka.ActorDeadError):
        ref.tell(encode(RunDeadline(run_id)))
    host.run_now()


def _call_sync(
    host: SessionHost,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    deliver: Any,
    var: tuple[ContextVar[Any], Any] | None,
) -> Any:
    if var is None:
        value = fn(*args)
    else:
        token = var[0].set(var[1])
        try:
            value = fn(*args)
        finally:
            var[0].reset(token)
    if inspect.isawaitable(value):  # e.g. a partial of an async def: finish on the loop
        context = None
        if var is not None:
            context = copy_context()
            context.run(var[0].set, var[1])
        host.spawn(_await, (value,), deliver, context)
        return _PENDING
    return value


class _Finish:
    __slots__ = ("deliver",)

    def __init__(self, deliver: _Deliver) -> None:
        self.deliver = deliver

    def __call__(self, ok: bool, value: Any) -> None:
        if not (ok and value is _PENDING):
            self.deliver(ok, value)
