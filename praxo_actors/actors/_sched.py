"""The scheduler: a small pool of threads that runs the ready actors of an M:N runtime.

A :class:`Scheduler` owns a FIFO *ready queue* of runnable tasks (actor mailboxes with work) and N
worker threads that take a task, let it run a bounded batch, and come back for the next one. The
threads start with the first task, so creating a scheduler costs nothing until it is used.

A handler that blocks holds its worker thread. So that a few blocked handlers cannot stall every
other actor (and so that an actor may ``ask`` another one and wait, as with Pykka's thread per
actor), a worker that waits on an :class:`~praxo_actors.actors.MNFuture` for longer than
``_GRACE`` seconds, or enters :func:`blocking`, hands its slot to a spare thread, as Go's runtime
hands a processor on when a goroutine blocks in a system call. Spares are bounded
(``max_spare_threads``); once the blocked threads resume, a spare idle for ``_LINGER`` seconds
retires, so a burst of nested asks reuses spares instead of starting a thread per wait.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from typing import Any, Protocol

import msgspec
import pykka

from praxo_actors._errors import SchedulerClosedError
from praxo_actors._log import get_logger
from praxo_actors.actors._blocking import check_not_blocking
from praxo_actors.actors._live import LiveActors
from praxo_actors.codes import RUNTIME_SCHEDULER_CLOSED

__all__ = [
    "Scheduler",
    "SchedulerClosedError",
    "SchedulerStatistics",
    "blocking",
    "default_scheduler",
]

logger = get_logger("praxo_actors.actors")

# Python code runs one thread at a time (the GIL), so threads beyond the cores only add switches;
# blocked handlers are covered by spare threads instead.
_DEFAULT_THREADS = min(4, max(2, os.cpu_count() or 2))
# An ask round trip takes ~60 µs here; a wait ten times longer than the slowest expected reply is
# worth a spare thread (starting one costs ~100 µs), a shorter one is not.
_GRACE = 0.001
# Starting a thread costs more than 100 µs under load; a spare that waits this long for work is
# no longer needed.
_LINGER = 1.0
_BATCH = 64
_MAX_SPARE = 256

_local = threading.local()
_names = count(1)


class _Task(Protocol):
    def _run(self) -> None: ...


class SchedulerStatistics(msgspec.Struct, frozen=True):
    """A snapshot of a scheduler's state.

    Attributes:
        size: Threads that run actors when none is blocked.
        threads: Live worker threads, spares included.
        blocked: Worker threads waiting inside a handler (on a future or in :func:`blocking`).
        idle: Worker threads waiting for work.
        ready: Actors queued to run.
        closed: Whether :meth:`Scheduler.shutdown` has begun.
    """

    size: int
    threads: int
    blocked: int
    idle: int
    ready: int
    closed: bool


class Scheduler:
    """Run many :class:`~praxo_actors.actors.MNActor` s on a few threads.

    Each actor runs at most ``batch`` messages per turn and then goes to the back of the ready
    queue, so one flooded actor cannot starve the others.

    Args:
        threads: Worker threads; by default the number of cores, between 2 and 4.
        name: Prefix of the worker threads' names.
        batch: Messages an actor handles per turn before it yields its thread.
        max_spare_threads: Extra threads started while handlers block (see :func:`blocking`).

    Raises:
        ValueError: If ``threads`` or ``batch`` is below 1, or ``max_spare_threads`` below 0.
    """

    def __init__(
        self,
        threads: int | None = None,
        *,
        name: str | None = None,
        batch: int = _BATCH,
        max_spare_threads: int = _MAX_SPARE,
    ) -> None:
        size = _DEFAULT_THREADS if threads is None else threads
        if size < 1 or batch < 1 or max_spare_threads < 0:
            msg = "threads and batch must be >= 1 and max_spare_threads >= 0"
            raise ValueError(msg)
        self._size = size
        self._batch = batch
        self._max_threads = size + max_spare_threads
        self._name = name or f"praxo-mn-{next(_names)}"
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._ready: deque[_Task] = deque()
        # The mailboxes of this scheduler's actors that have not stopped: the threads retire
        # when none is left, and shutdown() marks the ones still here dead.
        self._live = LiveActors()
        self._workers: set[threading.Thread] = set()
        self._thread_ids = count(0)
        self._nthreads = 0
        self._idle = 0
        self._blocked = 0
        self._started = False
        self._closing = False
        self._closed = False
        self._cap_reported = False

    def __repr__(self) -> str:
        return f"<Scheduler {self._name} size={self._size}>"

    def __enter__(self) -> Scheduler:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.shutdown()

    @property
    def size(self) -> int:
        """Threads that run actors when no handler blocks."""
        return self._size

    @property
    def batch(self) -> int:
        """Messages an actor handles per turn."""
        return self._batch

    @property
    def closed(self) -> bool:
        """Whether :meth:`shutdown` has begun; a closed scheduler starts no new actor."""
        return self._closing

    def statistics(self) -> SchedulerStatistics:
        """Return a snapshot of the threads and the ready queue."""
        with self._lock:
            return SchedulerStatistics(
                size=self._size,
                threads=self._nthreads,
                blocked=self._blocked,
                idle=self._idle,
                ready=len(self._ready),
                closed=self._closing,
            )

    def shutdown(self, timeout: float | None = 10.0) -> None:
        """Stop every registered actor on this scheduler, then its threads.

        Actors of a class with ``actor_registered = False`` are not known to Pykka's registry:
        their owner stops them (the runtime stops its sessions through their supervisor).
        Actors are asked to stop in the reverse of their start order (each handles the messages
        queued before its stop, then runs ``on_stop``). An actor or thread still busy at the
        deadline is abandoned and reported: Python cannot stop a thread.

        Args:
            timeout: Seconds to wait in all; ``None`` waits as long as it takes.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            if self._closing:
                return
            self._closing = True
        stops = []
        for ref in reversed(pykka.ActorRegistry.get_all()):
            if getattr(ref.actor_inbox, "_sched", None) is self:
                stops.append((ref, ref.stop(block=False)))
        for ref, stop in stops:
            try:
                stop.get(timeout=_remaining(deadline))
            except pykka.Timeout:
                logger.warning("scheduler.actor_abandoned", scheduler=self._name, actor=str(ref))
        with self._lock:
            self._closed = True
            self._cond.notify_all()
            workers = list(self._workers)
        me = threading.current_thread()
        for thread in workers:
            if thread is not me:
                thread.join(_remaining(deadline))
                if thread.is_alive():
                    logger.warning(
                        "scheduler.thread_abandoned", scheduler=self._name, thread=thread.name
                    )
        kill_leftovers(self)

    # -- used by the actor layer (under ``_lock`` where named ``_locked``) ---------------------

    def _check_open_locked(self) -> None:
        if self._closing:
            msg = f"{self._name} is shut down"
            raise SchedulerClosedError(RUNTIME_SCHEDULER_CLOSED, msg)

    def _gone_locked(self, task: Any) -> None:
        """Forget a stopped actor; with none left, let the threads retire."""
        self._live.discard(task)
        if not self._live and self._idle:
            self._cond.notify_all()

    def _ready_locked(self, task: _Task) -> None:
        """Queue ``task`` and wake an idle worker; the caller holds ``_lock``."""
        self._ready.append(task)
        if not self._started:
            self._started = True
            for _ in range(self._size):
                self._spawn_locked()
        elif self._idle:
            self._cond.notify()

    def _enter_blocking(self) -> None:
        """Count the calling worker as blocked; start a spare if too few threads remain."""
        with self._lock:
            self._blocked += 1
            if self._nthreads - self._blocked >= self._size or self._closed:
                return
            if self._nthreads < self._max_threads:
                self._spawn_locked()
            elif not self._cap_reported:
                self._cap_reported = True
                logger.warning(
                    "scheduler.spare_threads_exhausted",
                    scheduler=self._name,
                    threads=self._nthreads,
                    blocked=self._blocked,
                )

    def _exit_blocking(self) -> None:
        """Count the calling worker as running again."""
        with self._lock:
            self._blocked -= 1
            if self._idle and self._nthreads - self._blocked > self._size:
                # An idle thread waiting without a deadline is now surplus: let it start lingering.
                self._cond.notify()

    def _spawn_locked(self) -> None:
        thread = threading.Thread(
            target=self._work, name=f"{self._name}-{next(self._thread_ids)}", daemon=True
        )
        self._workers.add(thread)
        self._nthreads += 1
        thread.start()

    def _retire_locked(self) -> None:
        self._nthreads -= 1
        self._workers.discard(threading.current_thread())
        if self._nthreads == 0:
            self._started = False  # the next actor with work starts the threads again

    def _has_spare(self) -> bool:
        # Read without the lock: a hint that blocking now would start no thread.
        return self._nthreads - self._blocked > self._size

    def _work(self) -> None:
        _local.scheduler = self
        cond = self._cond
        ready = self._ready
        while True:
            with cond:
                while True:
                    if self._closed:
                        self._retire_locked()
                        return
                    if ready:
                        task = ready.popleft()
                        break
                    if not self._live and not self._blocked:
                        # No actor is left to run: a scheduler nobody shuts down must not keep
                        # its threads (they start again with the next actor).
                        self._retire_locked()
                        return
                    self._idle += 1
                    if self._nthreads - self._blocked > self._size:
                        woken = cond.wait(_LINGER)
                        self._idle -= 1
                        # Decide and count the exit in one critical section, or two surplus
                        # threads could both retire and leave the pool short.
                        if not woken and not ready and self._nthreads - self._blocked > self._size:
                            self._retire_locked()
                            return
                    else:
                        cond.wait()
                        self._idle -= 1
                        if not ready and not self._live and not self._blocked:
                            self._retire_locked()
                            return
            try:
                task._run()
            except BaseException:  # a worker thread must outlive any task
                logger.exception("scheduler.task_failed", scheduler=self._name)


def kill_leftovers(sched: Any) -> None:
    """Mark dead every actor still on ``sched`` after its shutdown (none can run any more)."""
    with sched._lock:
        leftovers = list(sched._live)
    for inbox in leftovers:
        inbox._kill()


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def current_scheduler() -> Scheduler | None:
    """Return the scheduler whose worker is the calling thread, or ``None``."""
    sched: Scheduler | None = getattr(_local, "scheduler", None)
    return sched


def wait_lock(lock: Any, timeout: float | None) -> bool:
    """Acquire ``lock`` within ``timeout``; a worker that waits long hands its slot to a spare.

    Raises:
        PraxoError: ``RUNTIME_BLOCKING_CALL`` on a thread that forbids blocking.
    """
    if timeout != 0:
        check_not_blocking("a blocking wait")
    sched = current_scheduler()
    if sched is None:
        return bool(lock.acquire(timeout=-1 if timeout is None else max(0.0, timeout)))
    if not sched._has_spare():
        # Most replies come within the grace period: do not start a thread for them.
        first = _GRACE if timeout is None else max(0.0, min(_GRACE, timeout))
        if lock.acquire(timeout=first):
            return True
        if timeout is not None:
            timeout -= first
            if timeout <= 0.0:
                return False
    sched._enter_blocking()
    try:
        return bool(lock.acquire(timeout=-1 if timeout is None else max(0.0, timeout)))
    finally:
        sched._exit_blocking()


@contextmanager
def blocking() -> Iterator[None]:
    """Mark a blocking call (I/O, ``time.sleep``, a ``ThreadingFuture``) inside a handler.

    On a scheduler thread, a spare thread runs other actors until the block ends; elsewhere this
    does nothing. Waiting on an :class:`~praxo_actors.actors.MNFuture` needs no marking.

    Example:
        ``with blocking(): data = sock.recv(4096)``

    Raises:
        PraxoError: ``RUNTIME_BLOCKING_CALL`` on a thread that forbids blocking.
    """
    check_not_blocking("a blocking call")
    sched = current_scheduler()
    if sched is None:
        yield
        return
    sched._enter_blocking()
    try:
        yield
    finally:
        sched._exit_blocking()


_default: Scheduler | None = None
_default_lock = threading.Lock()


def default_scheduler() -> Scheduler:
    """Return the process-wide scheduler, creating it (again, if it was shut down) on first use.

    Its threads are daemon threads: like Pykka's ``use_daemon_thread``, they do not keep the
    process alive, so stop your actors (or call :meth:`Scheduler.shutdown`) before exiting.
    """
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = Scheduler(name="praxo-mn")
        return _default
