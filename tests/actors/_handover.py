"""Forcing an interleaving of two threads: a loop on its own thread, and locks with hooks.

Each hand-over test stops one thread at the racy point (a hooked lock or loop method that
waits on an event), lets the other do its part, then lets the first go on: the order that a
busy machine produces once in thousands of runs, produced every time. Waits are bounded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from praxo_actors.actors import serve_loop

WAIT = 10.0
# How long a test waits for work that must not happen before it looks (a lost wakeup shows as
# this wait running out).
LOST = 3.0


class Served:
    """An event loop served on a thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(ready,), name="test-handover")
        self.thread.start()
        assert ready.wait(WAIT)
        assert self.thread.ident is not None
        self.thread_id = self.thread.ident

    def _serve(self, ready: threading.Event) -> None:
        self.loop.call_soon(ready.set)
        serve_loop(self.loop)

    def flush_timers(self) -> None:
        """Return once every timer due by now has fired (a later one fires after them)."""
        flushed = threading.Event()
        self.loop.call_soon_threadsafe(self.loop.call_later, 0.001, flushed.set)
        assert flushed.wait(WAIT)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)
        assert not self.thread.is_alive()
        self.loop.close()


class HookedLock:
    """A lock that tells when a given thread starts to wait for it."""

    def __init__(self, watched: int) -> None:
        self._lock = threading.Lock()
        self._watched = watched
        self.watched_waits = threading.Event()

    def __enter__(self) -> HookedLock:
        if threading.get_ident() == self._watched:
            self.watched_waits.set()
        self._lock.acquire()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._lock.release()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()


class Task:
    """A ready-queue entry that notes that it ran."""

    def __init__(self) -> None:
        self.ran = threading.Event()

    def _run(self) -> None:
        self.ran.set()


class RaceAtLock:
    """A future's lock: the first time thread ``holder`` holds it, ``other`` starts on a
    thread of its own and runs until it waits for this lock; then the holder goes on."""

    def __init__(self, other: Callable[[], object]) -> None:
        self._lock = threading.Lock()
        self._other = threading.Thread(target=other)
        self._other_waits = threading.Event()
        self.holder: int | None = None

    def __enter__(self) -> None:
        me = threading.get_ident()
        if me == self._other.ident:
            self._other_waits.set()
        self._lock.acquire()
        if me == self.holder and self._other.ident is None:
            self._other.start()
            assert self._other_waits.wait(WAIT)

    def __exit__(self, *_exc: object) -> None:
        self._lock.release()

    def join(self) -> None:
        self._other.join(WAIT)
        assert not self._other.is_alive()


class ArmedLock(HookedLock):
    """A scheduler lock that runs ``hook`` once, the next time the watched thread asks for it
    after :meth:`arm` (before it takes the lock)."""

    def __init__(self, watched: int) -> None:
        super().__init__(watched)
        self.hook: Callable[[], None] | None = None

    def arm(self, hook: Callable[[], None]) -> None:
        self.hook = hook

    def __enter__(self) -> HookedLock:
        hook = self.hook
        if hook is not None and threading.get_ident() == self._watched:
            self.hook = None
            hook()
        return super().__enter__()
