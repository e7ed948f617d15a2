"""The delivery pool: the threads that call subscribers, and a watchdog for slow calls.

A subscriber is user code, and user code may block for ever. Python cannot stop a thread, so a
call still running ``handoff`` seconds after it began costs its thread its place in the pool
instead, as Go's scheduler hands off a thread blocked in a system call: the watchdog *hands
off* the thread (it leaves the pool, finishes its job on its own and then ends), and a fresh
thread takes the free place, so the other subscribers never wait behind a slow one for longer
than the hand-off time. A call still running ``timeout`` seconds after it began is reported
once (the subscriber is *stuck*). A job (one subscription's drain) makes one call at a time and
runs on one thread at a time, so the handed-off threads alive at once number at most the
subscriptions.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable

from praxo_actors._log import get_logger

__all__ = ["DeliveryPool", "Worker"]

logger = get_logger("praxo_actors.events")

Job = Callable[["Worker"], None]
"""A unit of work: it runs on a worker, and brackets each subscriber call in ``begin``/``end``."""

Report = Callable[[float], None]
"""Told, on the watchdog's thread, that the call it was given for has run this many seconds."""


class Worker:
    """One thread of a :class:`DeliveryPool`, as its jobs and its watchdog see it."""

    __slots__ = ("calls", "pool", "report", "reported", "retired", "started", "thread")

    def __init__(self, pool: DeliveryPool, name: str) -> None:
        self.pool = pool
        self.thread = threading.Thread(target=pool.serve, args=(self,), name=name, daemon=True)
        # When the call in progress began, on the pool's clock; None between calls. Written by
        # this worker's thread only, read by the watchdog.
        self.started: float | None = None
        # Set once, under the pool's lock, by the watchdog: the thread has left the pool.
        self.retired = False
        self.report: Report | None = None
        # The calls begun on this thread (by it), and the last of them reported as stuck (by
        # the watchdog, under the pool's lock).
        self.calls = 0
        self.reported = 0

    @property
    def stuck(self) -> bool:
        """Whether the call in progress has overrun the timeout (and been reported)."""
        return self.started is not None and self.reported == self.calls

    def begin(self, report: Report) -> None:
        """Mark the start of a subscriber call; ``report`` hears if it overruns the timeout."""
        self.report = report
        pool = self.pool
        self.calls += 1
        self.started = pool.clock()
        if pool.watch_idle:
            pool.wake_watchdog()

    def end(self) -> None:
        """Mark the end of the call begun last."""
        self.started = None
        self.report = None


class DeliveryPool:
    """Run jobs on up to ``threads`` threads, none of them held by a call past ``handoff``.

    Threads start on demand. ``clock`` is read for the calls' start times and deadlines (the
    watchdog's waits are real time); :meth:`check` is the watchdog's whole decision. A call
    that overruns ``timeout`` is reported; ``handoff`` (at most ``timeout``; None: the same)
    is when its thread leaves the pool.
    """

    def __init__(
        self,
        threads: int,
        timeout: float,
        *,
        handoff: float | None = None,
        name: str = "praxo-events",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self._max = threads
        self._timeout = timeout
        self._handoff = timeout if handoff is None else min(handoff, timeout)
        self._name = name
        self._numbers = itertools.count()
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)  # idle workers wait here for jobs
        self._wake = threading.Condition(self._lock)  # the watchdog waits here
        self._jobs: deque[Job] = deque()
        self._active: list[Worker] = []  # the pool's places
        self._alive: list[Worker] = []  # active and handed-off threads not yet ended
        self._idle = 0
        self._closed = False
        self._watchdog: threading.Thread | None = None
        # True while the watchdog knows of no call in progress (and so waits without a
        # deadline): a call that begins then must wake it.
        self.watch_idle = True
        self._poked = False
        self.retired_total = 0

    def submit(self, job: Job) -> bool:
        """Queue ``job`` for a worker; return False (running nothing) once the pool is shut."""
        with self._lock:
            if self._closed:
                return False
            self._jobs.append(job)
            if len(self._jobs) <= self._idle:
                self._work.notify()
            elif len(self._active) < self._max:
                self._spawn()
        return True

    def _spawn(self) -> None:
        """Start a worker for a free place (the lock held)."""
        worker = Worker(self, f"{self._name}-{next(self._numbers)}")
        self._active.append(worker)
        self._alive.append(worker)
        worker.thread.start()
        if self._watchdog is None:
            self._watchdog = threading.Thread(
                target=self._watch, name=f"{self._name}-watchdog", daemon=True
            )
            self._watchdog.start()

    def serve(self, worker: Worker) -> None:
        """Run queued jobs on ``worker``'s thread until the pool shuts or hands it off."""
        try:
            while True:
                with self._lock:
                    while not self._jobs and not self._closed:
                        self._idle += 1
                        self._work.wait()
                        self._idle -= 1
                    if not self._jobs:
                        return
                    job = self._jobs.popleft()
                try:
                    job(worker)
                except Exception:  # a job's own fault: the pool keeps going
                    logger.exception("delivery_job_failed")
                del job
                if worker.retired:
                    return
        finally:
            with self._lock:
                self._alive.remove(worker)
                if worker in self._active:
                    self._active.remove(worker)

    def wake_watchdog(self) -> None:
        """Wake the watchdog to look at the calls in progress (one has just begun)."""
        with self._lock:
            self._poked = True
            self._wake.notify()

    def check(self) -> float | None:
        """Hand off the workers whose call has run ``handoff`` seconds, and report each call
        that has run ``timeout`` seconds (once).

        Return the seconds until the next call in progress would reach either (None: no call
        is in progress that has one ahead).
        """
        overdue: list[tuple[Report, float]] = []
        with self._lock:
            # Set before the workers' start times are read: a call that begins after the read
            # sees it and wakes the watchdog.
            self.watch_idle = True
            now = self.clock()
            waits: list[float] = []
            for worker in list(self._alive):
                # One read of each: the worker writes them without the lock (calls first).
                calls, started, report = worker.calls, worker.started, worker.report
                if started is None or report is None:
                    continue
                elapsed = now - started
                if not worker.retired:
                    if elapsed >= self._handoff:
                        self._retire(worker)
                    else:
                        waits.append(self._handoff - elapsed)
                if worker.reported != calls:
                    if elapsed >= self._timeout:
                        worker.reported = calls
                        overdue.append((report, elapsed))
                    else:
                        waits.append(self._timeout - elapsed)
            wait = min(waits) if waits else None
            self.watch_idle = wait is None
        for report, elapsed in overdue:
            try:
                report(elapsed)
            except Exception:
                logger.exception("delivery_report_failed")
        return wait

    def _retire(self, worker: Worker) -> None:
        """Hand ``worker``'s place to a fresh thread (the lock held)."""
        worker.retired = True
        self._active.remove(worker)
        self.retired_total += 1
        worker.thread.name = f"{self._name}-handoff-{worker.thread.name.rsplit('-', 1)[-1]}"
        if not self._closed and len(self._jobs) > self._idle:
            self._spawn()

    def _watch(self) -> None:
        while True:
            wait = self.check()
            with self._lock:
                if self._closed:
                    return
                if not self._poked:
                    self._wake.wait(wait)
                self._poked = False

    @property
    def threads(self) -> int:
        """The threads holding a place in the pool now."""
        with self._lock:
            return len(self._active)

    @property
    def retired(self) -> int:
        """The handed-off threads not yet ended."""
        with self._lock:
            return len(self._alive) - len(self._active)

    def shutdown(self, timeout: float) -> list[str]:
        """Stop taking jobs, let the queued ones run, and end the threads.

        Return the names of the threads still in a subscriber's call: those in a call reported
        stuck at once (nothing is gained by waiting on it), the others after ``timeout``
        seconds. Each ends when its call returns.
        """
        with self._lock:
            self._closed = True
            workers = list(self._alive)
            watchdog = self._watchdog
            self._work.notify_all()
            self._wake.notify_all()
        deadline = time.monotonic() + timeout
        if watchdog is not None:
            watchdog.join(timeout)
        me = threading.current_thread()
        left = []
        for worker in workers:
            thread = worker.thread
            if thread is me:  # shut down from a subscriber on this pool: it ends after it
                continue
            if not worker.stuck:
                thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                left.append(thread.name)
        return left
