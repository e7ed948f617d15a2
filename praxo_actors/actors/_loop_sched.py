"""Run M:N actors on an asyncio event loop, on the loop's own thread.

A :class:`LoopScheduler` is a :class:`~praxo_actors.actors.Scheduler` without threads: its
ready actors are run by a callback on the loop, so an actor and the ``async def`` callbacks it
starts share one thread and hand nothing off between them. Putting a message into an
idle mailbox queues the actor and, once per burst, schedules the drain (``call_soon`` on the
loop's thread, ``call_soon_threadsafe`` elsewhere). A drain runs at most ``turns`` actor turns
(each at most ``batch`` messages) and then yields to the loop, so I/O and timers stay served
while thousands of actors have work.

Nothing may block on this thread: a handler or callback that waits on an unfinished future
gets ``RUNTIME_BLOCKING_CALL`` instead of a deadlock.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

import praxo_actors.actors._checks as _checks
from praxo_actors._errors import SchedulerClosedError
from praxo_actors._log import get_logger
from praxo_actors.actors._live import LiveActors
from praxo_actors.actors._sched import kill_leftovers
from praxo_actors.codes import RUNTIME_SCHEDULER_CLOSED

__all__ = ["LoopScheduler"]

logger = get_logger("praxo_actors.actors")

T = TypeVar("T")

_BATCH = 64
# 256 turns of a session take ~5 ms here: long enough to amortise the drain, short enough that
# a socket read or a timer due meanwhile waits little.
_TURNS = 256


class LoopScheduler:
    """Run actors' turns on ``loop``; see the module docstring.

    Args:
        loop: The event loop (running now or soon) whose thread runs the actors.
        thread_id: ``threading.get_ident()`` of that loop's thread.
        name: A label for logs.
        batch: Messages an actor handles per turn.
        turns: Actor turns per drain before the loop runs its other callbacks.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        thread_id: int,
        *,
        name: str = "praxo-loop",
        batch: int = _BATCH,
        turns: int = _TURNS,
    ) -> None:
        self._loop = loop
        self._thread_id = thread_id
        self._name = name
        self._batch = batch
        self._turns = turns
        self._lock = threading.Lock()
        self._ready: deque[Any] = deque()
        self._live = LiveActors()
        # The wake-up state, read and written only under _lock, always together: _scheduled is
        # set while a drain is due or running (a running drain looks at _ready again before it
        # ends), _pending is the drain callback while it is due. The callback clears _pending
        # under the lock as it starts: a thread that scheduled it may still be storing the
        # handle (call_soon_threadsafe makes it runnable before it returns), and a clear
        # without the lock, overwritten by that late store, left a drain that ran out of turns
        # believing another was due: the loop then slept with actors ready.
        self._scheduled = False
        self._pending: asyncio.Handle | None = None
        self._draining = False
        # Set on the loop's thread while run_after's call runs: the drain that follows it
        # does the work, so a put then schedules no callback (to be cancelled right after).
        self._deferring = False
        self._closing = False

    def __repr__(self) -> str:
        return f"<LoopScheduler {self._name}>"

    @property
    def closed(self) -> bool:
        """Whether :meth:`shutdown` has run; a closed scheduler starts no new actor."""
        return self._closing

    @property
    def live(self) -> int:
        """The number of actors on this scheduler that have not stopped."""
        return len(self._live)

    def shutdown(self) -> None:
        """Refuse new actors and mark every actor still here dead (stop them first)."""
        with self._lock:
            self._closing = True
        kill_leftovers(self)

    # -- used by the actor layer (under ``_lock`` where named ``_locked``) ---------------------

    def _check_open_locked(self) -> None:
        if self._closing:
            raise SchedulerClosedError(RUNTIME_SCHEDULER_CLOSED, f"{self._name} is shut down")

    def _gone_locked(self, task: Any) -> None:
        self._live.discard(task)

    def _ready_locked(self, task: Any) -> None:
        self._ready.append(task)
        if self._scheduled:
            return
        if (self._draining or self._deferring) and threading.get_ident() == self._thread_id:
            # A put from a turn, or from run_after's call: the drain running (or the one
            # run_after makes next) takes it, and schedules one itself if it runs out of turns.
            return
        self._scheduled = True
        try:
            if threading.get_ident() == self._thread_id:
                self._pending = self._loop.call_soon(self._drain)
            else:
                self._pending = self._loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the loop is closed: nothing will run here again
            self._scheduled = False
            logger.warning("loop_scheduler.loop_closed", scheduler=self._name)

    def run_now(self) -> None:
        """Run the ready actors at once, if called on the loop's thread outside a turn.

        An owner calls it at points it controls (the runtime: after a callback's outcome is
        told to its session, and after a coroutine submits a run), so that the turn runs in the
        same step of the loop instead of a later one, like Python 3.12's eager tasks: a zero-latency
        run then takes three turns of the loop instead of five. The drain callback that the
        first put scheduled is cancelled once this drain has emptied the ready queue.
        """
        if not self._draining and threading.get_ident() == self._thread_id and self._ready:
            self._drain(eager=True)

    def run_after(self, fn: Callable[..., T], *args: Any) -> T:
        """Return ``fn(*args)``, then run the actors it made ready at once, as :meth:`run_now`.

        For an owner that tells an actor and then runs it in the same step (a callback's
        outcome told to its session): the put schedules no drain callback meanwhile, which
        :meth:`run_now` would only cancel (a ``call_soon``, its handle and a turn of the loop
        skipping it, ~1.5 µs a time here). Anywhere but on the loop's thread outside a drain,
        this is ``fn(*args)``. If ``fn`` raises, the actors it made ready run in a drain
        scheduled as usual.
        """
        if self._draining or self._deferring or threading.get_ident() != self._thread_id:
            return fn(*args)
        self._deferring = True
        try:
            result = fn(*args)
        except BaseException:
            self._deferring = False
            with self._lock:
                if self._ready and not self._scheduled:
                    self._scheduled = True
                    self._pending = self._loop.call_soon(self._drain)
            raise
        self._deferring = False
        if self._ready:
            self._drain(eager=True)
        return result

    def _drain(self, eager: bool = False) -> None:
        """Run ready turns (``eager``: called by :meth:`run_now` or :meth:`run_after`, not as
        the drain callback, which is then no longer due)."""
        if self._draining:
            # A scheduled drain reached while an eager one runs (from a nested loop): that one
            # finishes the work, and schedules again if it runs out of turns.
            with self._lock:
                self._pending = None
            return
        self._draining = True
        ready = self._ready
        lock = self._lock
        # The scheduled callback an eager drain made redundant: a cancelled handle is skipped
        # by the loop, where a due one costs a run of an empty drain (twice per zero-latency
        # run, ~1.5 µs each here).
        redundant: asyncio.Handle | None = None
        try:
            if not eager:
                with lock:
                    self._pending = None
            for _ in range(self._turns):
                with lock:
                    if not ready:
                        self._scheduled = False
                        redundant, self._pending = self._pending, None
                        break
                    task = ready.popleft()
                try:
                    task._run()
                except BaseException:  # the loop must outlive any actor turn
                    logger.exception("loop_scheduler.task_failed", scheduler=self._name)
            else:
                with lock:
                    if not ready:
                        self._scheduled = False
                        redundant, self._pending = self._pending, None
                    else:
                        self._scheduled = True  # an eager drain may have started with none due
                        if self._pending is None:
                            self._pending = self._loop.call_soon(self._drain)
        finally:
            self._draining = False
        if redundant is not None:
            redundant.cancel()
        if _checks.ON:
            self._check_state()

    def _check_state(self) -> None:
        """Check, between drains on the loop's thread, that no ready actor waits unwoken.

        Every ready actor has a drain due: ``_scheduled`` and ``_pending`` agree with the ready
        queue, and the pending handle is live in the loop's own ready queue (where the loop
        keeps one: asyncio's loops do).
        """
        with self._lock:
            ready, scheduled, pending = len(self._ready), self._scheduled, self._pending
            if self._closing or self._deferring:
                return
            problem = None
            if bool(ready) != scheduled or (pending is not None) != scheduled:
                problem = f"ready={ready} scheduled={scheduled} pending={pending!r}"
            elif pending is not None:
                due = getattr(self._loop, "_ready", None)
                if pending.cancelled() or (due is not None and pending not in due):
                    problem = f"{ready} actors ready, and the drain {pending!r} is not due"
        if problem is not None:
            _checks.violation(f"{self._name}: lost wakeup after a drain: {problem}")
