"""Start a run's callback without waiting for it; its outcome comes back as a message.

An ``async def`` callback starts as a task on the runtime's event loop; a plain one runs on the
runtime's I/O pool. Either way its outcome comes back to the session inside an ``EffectDone``
message (:class:`_Deliver`), and the context variable the interpreter named (the callback's
tool or model context) is current while it runs. Starting it is a call into user code, made
through the session's guard (:mod:`~praxo_actors.runtime._session._guard`): what that raises
comes back the same way, as the callback's outcome.

What :func:`start_call` returns lets the session cancel an ``async`` callback in flight (at a
deadline, a hard cancel or a stop), from whichever thread the session runs on. A sync callback
cannot be interrupted: the session stops waiting for it, and its late outcome, carrying a token
the session no longer expects (or reaching a stopped actor), is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Callable, Coroutine
from contextvars import ContextVar, copy_context
from inspect import CO_COROUTINE
from types import FunctionType
from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors.agent._interpret import Call
from praxo_actors.runtime._session._outcome import effect_done

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["call_chain", "start_call"]

_CHAIN: ContextVar[tuple[str, ...]] = ContextVar("praxo_call_chain", default=())


def call_chain() -> tuple[str, ...]:
    """Return the sessions waiting, in an agent tool's call chain, for the run whose callback
    is running (outermost first; empty for a run no agent tool started)."""
    return _CHAIN.get()


def start_call(
    host: SessionHost,
    ref: pykka.ActorRef[Any],
    run_id: str,
    token: int,
    call: Call,
    chain: tuple[str, ...] = (),
) -> Any:
    """Start ``call`` for run ``run_id``; return what cancels it (None: on the I/O pool).

    That is its asyncio task, or, for a session off the loop's thread, an :class:`_OffLoop`
    handle; either has ``cancel()``. Its outcome reaches ``ref`` as
    ``EffectDone(run_id, token, ...)``. ``chain``: the sessions waiting for this run (an agent
    tool's child run), current as :func:`call_chain` in the call.
    """
    try:  # user code, guarded as ``enter`` guards it (inline: the path of every run)
        fn = call.fn
        if (
            not chain
            and threading.get_ident() == host.loop_thread_id
            and (
                (type(fn) is FunctionType and fn.__code__.co_flags & CO_COROUTINE) or _is_async(fn)
            )
        ):
            # The path of most runs: an async callback started on the loop's thread. Its task
            # awaits it in :func:`_outcome`, whose frame holds what a :class:`_Deliver` would
            # (one object fewer for the collector per run in flight).
            context = None if call.var is None else _context((call.var, call.value))
            return host.spawn_in(_outcome, fn, call.args, context, host, ref, run_id, token)
        return _start(host, call, _Deliver(host, ref, run_id, token), chain)
    except BaseException as exc:  # e.g. an object whose ``__call__`` lookup raised
        _Deliver(host, ref, run_id, token)(False, exc)  # the callback's outcome
        return None


async def _outcome(
    coro: Coroutine[Any, Any, Any],
    tasks: set[asyncio.Task[Any]],
    host: SessionHost,
    ref: pykka.ActorRef[Any],
    run_id: str,
    token: int,
) -> None:
    """Await an async callback in its task; send its outcome to its session from the task's
    last step (as :class:`_Deliver` and the bridge's ``_deliver`` would, together).

    A ``BaseException`` but the task's own cancellation is the callback's outcome, not raised
    out of the task (asyncio would re-raise some through the loop, swallow the others).
    """
    try:
        value = await coro
    except asyncio.CancelledError:
        error = RuntimeError("the callback was cancelled (its loop is stopping)")
        message = effect_done(run_id, token, False, error)
        host.loop_scheduler.run_after(_tell, ref, message)
        raise
    except BaseException as exc:  # KeyboardInterrupt, SystemExit, GeneratorExit, the user's own
        message = effect_done(run_id, token, False, exc)
    else:
        message = effect_done(run_id, token, True, value)
    finally:
        tasks.discard(asyncio.current_task())
    # At the end of the task, on the loop: the session handles it in this same step.
    host.loop_scheduler.run_after(_tell, ref, message)


def _tell(ref: pykka.ActorRef[Any], message: Any) -> None:
    # A session that stopped meanwhile has had its runs settled already.
    with contextlib.suppress(pykka.ActorDeadError):
        ref.tell(message)


def _start(host: SessionHost, call: Call, deliver: _Deliver, chain: tuple[str, ...]) -> Any:
    var = None if call.var is None else (call.var, call.value)
    if chain:  # a child run's callback: its chain is current too (rare: no cost otherwise)
        context = copy_context()
        context.run(_CHAIN.set, chain)
        if var is not None:
            context.run(var[0].set, var[1])
        if _is_async(call.fn):
            if threading.get_ident() == host.loop_thread_id:
                return host.spawn(call.fn, call.args, deliver, context)
            return _OffLoop(host, call.fn, call.args, deliver, context)
        args = (host, context.run, (call.fn, *call.args), deliver, None)
        host.io_pool.submit(_call_sync, args, _Finish(deliver))
        return None
    fn = call.fn
    if (type(fn) is FunctionType and fn.__code__.co_flags & CO_COROUTINE) or _is_async(fn):
        own = None if var is None else _context(var)
        if threading.get_ident() == host.loop_thread_id:
            return host.spawn(fn, call.args, deliver, own)
        return _OffLoop(host, fn, call.args, deliver, own)
    host.io_pool.submit(_call_sync, (host, call.fn, call.args, deliver, var), _Finish(deliver))
    return None


def _is_async(fn: Callable[..., Any]) -> bool:
    # An ``async def`` function is told by its code's flags where it is called (what inspect
    # would say, without its unwrapping); this is for the rest.
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object whose __call__ is async def
    )


def _context(var: tuple[ContextVar[Any], Any] | None) -> Any:
    """A copy of the current context with ``var`` set (None: the task's own)."""
    if var is None:
        return None
    context = copy_context()
    context.run(var[0].set, var[1])
    return context


class _OffLoop:
    """An async callback started by a session on a scheduler thread: its task starts on the
    loop, and :meth:`cancel` (from the session's thread) reaches it there.

    Both steps run on the loop, in either order: a cancel that comes first means the callback
    never starts (its outcome was no longer awaited anyway).
    """

    __slots__ = ("cancelled", "host", "task")

    def __init__(
        self,
        host: SessionHost,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        deliver: _Deliver,
        context: Any,
    ) -> None:
        self.host = host
        self.task: Any = None  # set on the loop
        self.cancelled = False  # set on the loop
        if not host.post(self._start, fn, args, deliver, context):
            deliver(False, RuntimeError("the runtime's event loop is closed"))

    def _start(
        self, fn: Callable[..., Any], args: tuple[Any, ...], deliver: _Deliver, context: Any
    ) -> None:
        if not self.cancelled:
            self.task = self.host.spawn(fn, args, deliver, context)

    def cancel(self) -> None:
        """Cancel the callback's task (from any thread; it happens on the loop)."""
        self.host.post(self._cancel)

    def _cancel(self) -> None:
        self.cancelled = True
        if self.task is not None:
            self.task.cancel()


async def _await(value: Any) -> Any:
    return await value


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
        # At the end of an async callback's task, on the loop: handle it in this same step.
        self.host.loop_scheduler.run_after(_tell, self.ref, message)


_PENDING = object()


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
        host.spawn(_await, (value,), deliver, _context(var))
        return _PENDING
    return value


class _Finish:
    __slots__ = ("deliver",)

    def __init__(self, deliver: _Deliver) -> None:
        self.deliver = deliver

    def __call__(self, ok: bool, value: Any) -> None:
        if not (ok and value is _PENDING):
            self.deliver(ok, value)
