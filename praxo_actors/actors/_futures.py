"""A Pykka future that any thread can wait on and asyncio can await without blocking its loop."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sys
import threading
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, TypeVar

import pykka

from praxo_actors._log import get_logger
from praxo_actors.actors._sched import wait_lock
from supervisors import _pykka_compat as compat

if TYPE_CHECKING:
    from supervisors._pykka_compat import GetHookFunc, OptExcInfo

__all__ = ["MNFuture"]

logger = get_logger("praxo_actors.actors")

# The futures' striped locks: enough that unrelated futures seldom meet on one.
_LOCKS = tuple(threading.Lock() for _ in range(64))

T = TypeVar("T")


@compat.future_defaults
class MNFuture(pykka.Future[T]):
    """The future of an :class:`~praxo_actors.actors.MNActor`'s replies.

    ``get(timeout=...)`` works from any thread. On a scheduler thread a long wait hands the
    thread's slot to a spare, so an actor may wait on another actor's reply. ``await future``
    suspends the awaiting task and resumes it through ``loop.call_soon_threadsafe`` when the
    value arrives (Pykka's own ``Future.__await__`` calls the blocking ``get()`` inside the event
    loop). A future made by a get hook (``map``, ``filter``, ``join``, ``reduce``,
    ``ActorRef.stop``) has no completion signal of its own: awaiting it waits in the loop's
    default executor.

    A future is cheap: a lock shared with other futures, and a wait lock per blocked getter,
    made only when one waits.
    """

    # The state of a new future, as class attributes: an instance sets only what changes (a
    # third of the cost of making one, and one is made per ask).
    _done = False
    _value: Any = None
    _exc_info: OptExcInfo | None = None
    _waiters: list[Any] | None = None
    _callbacks: list[Callable[[MNFuture[T]], object]] | None = None
    # The first task awaiting this future: its loop and the asyncio future it awaits.
    _wake_loop: asyncio.AbstractEventLoop | None = None
    _wake: asyncio.Future[None] | None = None
    # (loop, asyncio future) per further task awaiting it.
    _wakes: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] | None = None
    # Set by set_get_hook(), the only way Pykka (map, filter, join, reduce, stop) makes one.
    _hooked = False

    def __init__(self) -> None:
        # Not pykka.Future.__init__: it makes an object per future only to mark "no hook result"
        # (compat.future_defaults gives the class what it sets).
        # A lock shared with other futures (held only for a few assignments, never while
        # calling out): a lock of its own would be one more object per ask for the collector.
        self._lock = _LOCKS[(id(self) >> 4) % len(_LOCKS)]

    def __repr__(self) -> str:
        return f"<MNFuture {'done' if self._done else 'pending'}>"

    def done(self) -> bool:
        """Return whether a value or an exception has been set."""
        return self._done

    def get(self, *, timeout: float | None = None) -> T:
        """Return the value, or raise the exception, once set.

        Args:
            timeout: Seconds to wait; ``None`` waits as long as it takes.

        Raises:
            pykka.Timeout: If nothing was set within ``timeout``.
            Exception: The exception set on the future.
        """
        if self._hooked:
            # Its own lock: a get hook blocks, maybe on a future that shares the striped lock.
            with self._hook_lock:
                return super().get(timeout=timeout)
        if not self._done:
            self._wait(timeout)
        return self._outcome()

    def set(self, value: T | None = None) -> None:
        """Set the value and wake every waiter.

        Raises:
            queue.Full: If a value, an exception or a get hook is already set.
        """
        self._resolve(value, None)

    def set_exception(self, exc_info: OptExcInfo | None = None) -> None:
        """Set an exception (by default the one being handled) and wake every waiter.

        Raises:
            queue.Full: If a value, an exception or a get hook is already set.
        """
        assert exc_info is None or len(exc_info) == 3
        self._resolve(None, sys.exc_info() if exc_info is None else exc_info)

    def set_get_hook(self, func: GetHookFunc[T]) -> None:
        """Make ``get(timeout)`` return ``func(timeout)``.

        Raises:
            queue.Full: If a value or an exception is already set.
        """
        with self._lock:
            if self._done:
                raise queue.Full
            super().set_get_hook(func)
            self._hook_lock = threading.Lock()
            self._hooked = True

    def add_done_callback(self, fn: Callable[[MNFuture[T]], object]) -> None:
        """Call ``fn(future)`` once a value or an exception is set.

        ``fn`` runs in the thread that sets the future (often a scheduler thread: keep it
        short), or at once in the caller's thread if the future is already done. An exception
        from ``fn`` is logged and dropped.

        Raises:
            TypeError: If the future was made by a get hook (it completes only through ``get``).
        """
        if self._hooked:
            msg = "a future made by a get hook completes only through get()"
            raise TypeError(msg)
        with self._lock:
            if not self._done:
                if self._callbacks is None:
                    self._callbacks = [fn]
                else:
                    self._callbacks.append(fn)
                return
        _call(fn, self)

    def __await__(self) -> Generator[Any, None, T]:
        if self._hooked:
            loop = asyncio.get_running_loop()
            result: T = yield from loop.run_in_executor(None, self.get).__await__()
            return result
        if not self._done:
            loop = asyncio.get_running_loop()
            wake: asyncio.Future[None] = loop.create_future()
            with self._lock:
                done = self._done
                if done:
                    pass
                elif self._wake is None:
                    # Kept apart from the callbacks (no partial, no wrapper call), and the first
                    # awaiter in two attributes: a list and a tuple per run in flight fewer
                    # for the collector.
                    self._wake_loop, self._wake = loop, wake
                elif self._wakes is None:
                    self._wakes = [(loop, wake)]
                else:
                    self._wakes.append((loop, wake))
            if not done:
                yield from wake.__await__()
        if self._exc_info is None:  # the value (inline: every await of a reply ends here)
            value: T = self._value
            return value
        return self._outcome()

    __iter__ = __await__

    def _wait(self, timeout: float | None) -> None:
        waiter = threading.Lock()
        waiter.acquire()
        with self._lock:
            if self._done:
                return
            if self._waiters is None:
                self._waiters = [waiter]
            else:
                self._waiters.append(waiter)
        if wait_lock(waiter, timeout):
            return
        with self._lock:
            if self._done:
                return
            assert self._waiters is not None
            self._waiters.remove(waiter)
        msg = f"{timeout} seconds"
        raise pykka.Timeout(msg)

    def _resolve(self, value: Any, exc_info: OptExcInfo | None) -> None:
        with self._lock:
            if self._done or self._hooked:
                raise queue.Full
            self._value = value
            self._exc_info = exc_info
            self._done = True
            waiters, self._waiters = self._waiters, None
            callbacks, self._callbacks = self._callbacks, None
            wake_loop, wake, self._wake_loop, self._wake = self._wake_loop, self._wake, None, None
            wakes, self._wakes = self._wakes, None
        if waiters:
            for waiter in waiters:
                waiter.release()
        if wake is not None:
            assert wake_loop is not None
            if asyncio._get_running_loop() is wake_loop:  # on the awaiting loop's thread
                if not wake.done():
                    wake.set_result(None)
            else:
                _wake_loop(wake_loop, wake)
        if wakes:
            for loop, wake in wakes:
                _wake_loop(loop, wake)
        if callbacks:
            for fn in callbacks:
                _call(fn, self)

    def _outcome(self) -> T:
        exc_info = self._exc_info
        if exc_info is None:
            value: T = self._value
            return value
        exc_type, exc_value, exc_traceback = exc_info
        assert exc_type is not None
        if exc_value is None:
            exc_value = exc_type()
        if exc_value.__traceback__ is not exc_traceback:
            raise exc_value.with_traceback(exc_traceback)
        raise exc_value


def _call(fn: Callable[[Any], object], future: MNFuture[Any]) -> None:
    try:
        fn(future)
    except Exception:
        logger.exception("future.callback_failed", callback=repr(fn))


def _wake_loop(loop: asyncio.AbstractEventLoop, wake: asyncio.Future[None]) -> None:
    if asyncio._get_running_loop() is loop:
        if not wake.done():  # set on the awaiting loop's own thread: no self-pipe write needed
            wake.set_result(None)
        return
    # A closed loop raises RuntimeError: nobody is left to wake.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(_set_wake, wake)


def _set_wake(wake: asyncio.Future[None]) -> None:
    if not wake.done():
        wake.set_result(None)
