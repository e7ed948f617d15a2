"""The way into an event loop's thread from any thread: post a call, wait on one, set a timer.

Whoever owns state on a loop (trio's runner, here any owner an M:N system puts on its loop) is
reached from other threads only through its gate, as trio's ``TrioToken.run_sync_soon``: a call
made on the loop's thread runs at once, a call from elsewhere is queued and runs on the loop in
the order it was posted.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

import pykka

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors._log import get_logger
from praxo_actors.actors._futures import MNFuture
from praxo_actors.codes import RUNTIME_STOPPED, RUNTIME_TIMEOUT

__all__ = ["LoopGate", "OffLoopTimer"]

logger = get_logger("praxo_actors.actors")

T = TypeVar("T")


class LoopGate:
    """Run calls on ``loop``'s thread, from that thread or any other.

    Args:
        loop: The event loop (running now or soon).
        thread_id: ``threading.get_ident()`` of the loop's thread.
        after_posted: Called on the loop's thread after each burst of posted calls (an owner
            uses it to run what the burst made ready in the same step of the loop).
    """

    __slots__ = ("_after", "_closed", "_lock", "_posted", "_posting", "loop", "thread_id")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        thread_id: int,
        after_posted: Callable[[], None] | None = None,
    ) -> None:
        self.loop = loop
        self.thread_id = thread_id
        self._after = after_posted
        self._posted: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self._lock = threading.Lock()
        self._posting = False
        self._closed = False

    def __repr__(self) -> str:
        return f"<LoopGate of thread {self.thread_id}>"

    def post(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Run ``fn(*args)`` on the loop thread: now if this is it, else as soon as it can.

        Calls from other threads run in the order they were posted, a burst of them in one
        callback of the loop (``call_soon_threadsafe`` writes to the loop's self-pipe each
        time: a tenth of a busy loop's time when each of 10,000 runs made one). An exception
        from a posted call is logged and dropped. Return False if the gate or the loop is
        closed (the call will never run).
        """
        if threading.get_ident() == self.thread_id:
            if self._closed:
                return False
            fn(*args)
            return True
        with self._lock:
            if self._closed:
                return False
            self._posted.append((fn, args))
            if self._posting:
                return True
            self._posting = True
        try:
            self.loop.call_soon_threadsafe(self._run_posted)
        except RuntimeError:
            with self._lock:
                self._posted.clear()
                self._posting = False
            return False
        return True

    def close(self) -> None:
        """Refuse every later post, and run the calls posted before now (on the loop's thread).

        An owner closes its gate as it stops, while its loop still runs: a call posted just
        before then still runs (and the owner, stopping, answers it), one posted after is
        refused at once instead of waiting in a loop that will never run it.
        """
        with self._lock:
            self._closed = True
        self._run_posted()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def _run_posted(self) -> None:
        """Run a burst of posted calls (on the loop's thread)."""
        with self._lock:
            batch = list(self._posted)
            self._posted.clear()
            self._posting = False
        for i, (fn, args) in enumerate(batch):
            try:
                fn(*args)
            except Exception:
                logger.exception("posted_call_failed", call=repr(fn))
            except BaseException:
                # It goes on up (a KeyboardInterrupt stops the loop), but the calls posted
                # after it were accepted: they run in the next burst, not never.
                self._repost(batch[i + 1 :])
                raise
        if self._after is not None:
            self._after()

    def _repost(self, calls: list[tuple[Callable[..., Any], tuple[Any, ...]]]) -> None:
        with self._lock:
            self._posted.extendleft(reversed(calls))
            if not self._posted or self._posting:
                return
            self._posting = True
        try:
            self.loop.call_soon(self._run_posted)
        except RuntimeError:
            with self._lock:
                self._posted.clear()
                self._posting = False

    def call(self, fn: Callable[..., T], *args: Any, timeout: float) -> T:
        """Run ``fn(*args)`` on the loop thread and return its result (from any thread).

        Raises:
            PraxoError: ``RUNTIME_STOPPED`` if the loop is closed; ``RUNTIME_TIMEOUT``.
            Exception: What ``fn`` raised.
        """
        if threading.get_ident() == self.thread_id:
            return fn(*args)
        future: MNFuture[T] = MNFuture()

        def run() -> None:
            try:
                future.set(fn(*args))
            except BaseException:  # the caller's to raise, in its own thread
                future.set_exception()

        # Through post, the one way in: in order with the calls posted before it, refused
        # once the gate is closed (a check and a call_soon_threadsafe of its own could still
        # run a call that arrived after the owner stopped).
        if not self.post(run):
            raise AgentError(RUNTIME_STOPPED, "the event loop's gate is closed")
        try:
            return future.get(timeout=timeout)
        except pykka.Timeout:
            raise PraxoError(RUNTIME_TIMEOUT, f"no answer within {timeout} s") from None

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> Any:
        """Call ``fn(*args)`` on the loop after ``delay`` seconds; return a cancellable handle."""
        if threading.get_ident() == self.thread_id:
            return self.loop.call_later(delay, fn, *args)
        loop = self.loop
        return OffLoopTimer(loop, lambda fire: loop.call_later(delay, fire), fn, args)


class OffLoopTimer:
    """A timer set from another thread and armed on the loop's: cancel it from any thread.

    ``arm(fire)`` runs on the loop's thread and returns the loop's timer for ``fire``. The
    hand-over holds whatever the order: ``fire`` checks the cancel flag on the loop's thread
    before it calls ``fn``, so a cancel that lands while ``arm`` runs (after its check, before
    its handle is stored) still wins; the loop's own timer is cancelled on the loop's thread,
    never from the cancelling one (asyncio's handles are not thread-safe).
    """

    __slots__ = ("_args", "_cancelled", "_fn", "_handle", "_loop")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        arm: Callable[[Callable[[], None]], Any],
        fn: Callable[..., Any],
        args: tuple[Any, ...],
    ) -> None:
        self._loop = loop
        self._fn = fn
        self._args = args
        self._cancelled = False
        self._handle: Any = None

        def armed() -> None:
            if not self._cancelled:
                self._handle = arm(self._fire)

        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing is left to time
            loop.call_soon_threadsafe(armed)

    def _fire(self) -> None:
        self._handle = None
        if not self._cancelled:
            self._fn(*self._args)

    def cancel(self) -> None:
        """Stop the timer from firing (harmless once it has fired)."""
        if self._cancelled:
            return
        self._cancelled = True
        if asyncio._get_running_loop() is self._loop:
            self._disarm()
            return
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._disarm)

    def _disarm(self) -> None:
        # On the loop's thread: drop the loop's timer now rather than at its due time.
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.cancel()
