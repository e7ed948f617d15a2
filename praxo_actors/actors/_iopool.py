"""A bounded pool of threads for blocking (synchronous) callbacks.

An actor never waits on a blocking call: the call runs here, and its outcome goes to a callback
(the runtime's sessions run their synchronous models and tools so). Compared with
``ThreadPoolExecutor``, a call costs no ``concurrent.futures.Future`` (a condition and a lock per
call) and a ``SimpleQueue`` put. Threads start on demand, up to ``max_threads``; beyond that,
calls wait in the queue (bounded work, never unbounded threads).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

from praxo_actors._log import get_logger

__all__ = ["IOPool"]

logger = get_logger("praxo_actors.actors")

Outcome = Callable[[bool, Any], None]
_Job = tuple[Callable[..., Any], tuple[Any, ...], Outcome] | None


class IOPool:
    """Run blocking callables on up to ``max_threads`` threads; report each outcome."""

    def __init__(self, max_threads: int, name: str = "praxo-io") -> None:
        self._max = max_threads
        self._name = name
        self._queue: SimpleQueue[_Job] = SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._closed = False

    def submit(self, fn: Callable[..., Any], args: tuple[Any, ...], done: Outcome) -> None:
        """Call ``fn(*args)`` on a pool thread, then ``done(ok, value_or_exception)`` there.

        After :meth:`shutdown`, ``done`` gets a ``RuntimeError`` at once.
        """
        with self._lock:
            if self._closed:
                closed = True
            else:
                closed = False
                if self._idle == 0 and len(self._threads) < self._max:
                    thread = threading.Thread(
                        target=self._work, name=f"{self._name}-{len(self._threads)}", daemon=True
                    )
                    self._threads.append(thread)
                    thread.start()
                else:
                    self._idle -= 1 if self._idle else 0
                self._queue.put((fn, args, done))
        if closed:
            done(False, RuntimeError("the I/O pool is shut down"))

    def _work(self) -> None:
        get = self._queue.get
        while True:
            job = get()
            if job is None:
                return
            fn, args, done = job
            try:
                value = fn(*args)
            except Exception as exc:
                outcome: tuple[bool, Any] = (False, exc)
            except BaseException as exc:  # contained here: it is the callback's outcome
                outcome = (False, exc)
            else:
                outcome = (True, value)
            del job, fn, args
            try:
                done(*outcome)
            except Exception:
                logger.exception("io_callback_failed")
            del done, outcome
            with self._lock:
                self._idle += 1

    @property
    def threads(self) -> int:
        """The number of threads started so far."""
        return len(self._threads)

    def shutdown(self, timeout: float) -> list[str]:
        """Stop the threads once queued calls are done; return the names of those still busy.

        A thread whose callback has not returned within ``timeout`` is abandoned (Python cannot
        kill a thread); it exits when its callback returns.
        """
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        for _ in threads:
            self._queue.put(None)
        deadline = time.monotonic() + timeout
        stuck = []
        me = threading.current_thread()
        for thread in threads:
            if thread is me:  # stop() called from a callback on this pool: it exits after it
                continue
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                stuck.append(thread.name)
        return stuck
