"""The runtime's part that fires schedules: one thread, one timer, a heap of next fires.

The runner owns its heap and its set of schedules waiting for their agent (behind its lock);
the store owns the schedules themselves. Its thread sleeps until the earliest fire is due
(on the runtime's clock when one was given, so ``ManualClock.advance`` wakes it; in real time
otherwise), then fires each due schedule: it *claims* the fire in the store (a lease, by
compare-and-set: see :mod:`~praxo_actors.memory._schedules`), submits the input as a run of
the session under a run id made of the schedule's id and the occurrence's time, and *settles*
the row (its next fire, no lease). A claim that was never settled (its claimer died) runs
out after :data:`LEASE_NS`; the next claimer then submits only the runs no session knows.

With a runtime clock given, its readings are taken as wall-clock time (seconds since the
epoch): start a ``ManualClock`` at the time a test wants.
"""

from __future__ import annotations

import heapq
import os
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from praxo_actors._errors import PraxoError
from praxo_actors._log import get_logger
from praxo_actors.codes import SCHEDULE_INVALID, SCHEDULE_NOT_FOUND
from praxo_actors.memory._base import StoreBase
from praxo_actors.memory._schedules import (
    ScheduleRow,
    delete_row,
    insert_row,
    iter_rows,
    read_row,
    read_rows,
    replace_row,
)
from praxo_actors.runtime._protocol import FindRun, RunFound, decode, encode
from praxo_actors.runtime._schedule._submit import submit_fire
from praxo_actors.runtime._schedule._when import due_fires

if TYPE_CHECKING:
    from praxo_actors.runtime._front._runtime import Runtime
    from praxo_actors.runtime._kernel._clock import RuntimeClock, Timer
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = [
    "BACKOFF_FIRST_NS",
    "BACKOFF_MAX_NS",
    "LEASE_NS",
    "ScheduleRunner",
    "retry_delay_ns",
    "run_id_of",
]

logger = get_logger("praxo_actors.runtime")

_NS = 1_000_000_000
LEASE_NS = 30 * _NS
"""How long a claim on a fire holds before another runner may take the fire over."""
RESCAN_NS = 60 * _NS
"""How often a runner on a shared store (PostgreSQL) reads every schedule again, to arm those
other runtimes made (a host that died leaves its schedules to the others)."""
HORIZON_NS = 3600 * _NS
"""A runner that reads the store's schedules (``resume=True``) keeps in memory only those due
within this much time (a heap entry each), and reads the store again every half of it."""
_RESCAN = ""  # the heap entry of the next rescan (no schedule id is empty)
_RETRY_NS = 1 * _NS  # a claim that lost three races in a row is tried again this much later
# A fire the store failed is tried again after a capped exponential backoff: 1 s after its
# first failure in a row, then 2, 4, 8, 16 s, then every 30 s while the store keeps failing.
# The count is per schedule (the rescan's too) and starts again at its first success, so a
# store that is down costs one attempt per schedule every 30 s, not every second.
BACKOFF_FIRST_NS = 1 * _NS
BACKOFF_MAX_NS = 30 * _NS
_IDLE_WAIT = 60.0  # real time: wake at least this often (a clock set forward, a long delay)


def run_id_of(schedule_id: str, occurrence_ns: int) -> str:
    """The id of the run a schedule's occurrence submits: the same on every host and attempt."""
    return f"{schedule_id}@{occurrence_ns}"


def retry_delay_ns(failures: int) -> int:
    """How long after its ``failures``-th failure in a row (1, 2, ...) a fire is tried again:
    :data:`BACKOFF_FIRST_NS`, doubled at each failure, at most :data:`BACKOFF_MAX_NS`."""
    return min(BACKOFF_FIRST_NS << min(failures - 1, 32), BACKOFF_MAX_NS)


class ScheduleRunner:
    """Fire a runtime's schedules (see the module's docstring)."""

    def __init__(
        self, runtime: Runtime, kernel: Kernel, clock: RuntimeClock | None, timeout: float
    ) -> None:
        self._front = weakref.ref(runtime)
        self._kernel = kernel
        self._clock = clock
        self._timeout = timeout
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.submit: Callable[..., PraxoError | None] | None = None
        """How a fire is submitted (None: here; a cluster's host sends it to the session's)."""
        self._cond = threading.Condition()
        self._heap: list[tuple[int, str]] = []
        self._armed: dict[str, int] = {}  # each schedule's one live heap entry (others: stale)
        self._waiting: dict[str, set[str]] = {}  # agent ("": any) -> schedules waiting for it
        self._failures: dict[str, int] = {}  # the thread's own: failures in a row per schedule
        self._thread: threading.Thread | None = None
        self._timer: Timer | None = None
        self._timer_due: int | None = None
        self._closed = False
        self._scanning = False  # whether the store is read again and again (resume=True)
        self.loaded = threading.Event()  # set once the store's schedules were read (a bench)
        self.started_ns = self.wall_ns()

    # -- from any thread -----------------------------------------------------------------------

    def wall_ns(self) -> int:
        """Now, in wall-clock nanoseconds (the runtime's clock's reading when it has one)."""
        return time.time_ns() if self._clock is None else self._clock.monotonic_ns()

    @property
    def store(self) -> StoreBase:
        """The store that keeps the schedules.

        Raises:
            PraxoError: ``SCHEDULE_INVALID`` when the runtime's store cannot keep them (a
                store of the user's own that is not built on the project's stores).
        """
        store = self._kernel.store
        if not isinstance(store, StoreBase):
            raise PraxoError(
                SCHEDULE_INVALID,
                f"{type(store).__name__} cannot keep schedules (use InMemoryStore, SQLiteStore "
                "or PostgresStore)",
            )
        return store

    def create(self, row: ScheduleRow) -> ScheduleRow:
        """Store ``row`` (or find the schedule already stored under its id) and arm it."""
        stored = insert_row(self.store, row)
        self._add(stored.id, stored.next_fire_ns)
        return stored

    def rows(self, session_id: str | None = None) -> list[ScheduleRow]:
        """The schedules in the store (the session's only, with ``session_id``)."""
        return read_rows(self.store, session_id)

    def cancel(self, schedule_id: str) -> None:
        """Remove a schedule from the store: it fires no more, here or on any host.

        Raises:
            PraxoError: ``SCHEDULE_NOT_FOUND`` when there is no such schedule.
        """
        if not delete_row(self.store, schedule_id):
            raise PraxoError(SCHEDULE_NOT_FOUND, f"no schedule {schedule_id!r}")

    def start(self) -> None:
        """Read the store's schedules on the runner's thread, now and every so often (a
        runtime started with ``resume=True``): the runtime's start does not wait for it."""
        if not isinstance(self._kernel.store, StoreBase):
            return  # a store of the user's own keeps no schedules
        with self._cond:
            self._scanning = True
        self._add(_RESCAN, 0)

    def load(self) -> int:
        """Arm the schedules in the store due within :data:`HORIZON_NS`; return how many
        schedules it holds."""
        store = self.store
        now = self.wall_ns()
        n = 0
        for row in iter_rows(store):
            self._add(row.id, row.next_fire_ns)
            n += 1
        shared = type(store).__name__ == "PostgresStore"
        self._add(_RESCAN, now + (RESCAN_NS if shared else HORIZON_NS // 2))
        self.loaded.set()
        return n

    def agent_registered(self, name: str) -> None:
        """Arm again the schedules that waited for agent ``name`` (or for any agent)."""
        with self._cond:
            ids = self._waiting.pop(name, set()) | self._waiting.pop("", set())
        now = self.wall_ns()
        for schedule_id in sorted(ids):
            self._add(schedule_id, now)

    def close(self) -> None:
        """Stop firing and wait (bounded) for the thread; idempotent."""
        with self._cond:
            self._closed = True
            thread, self._thread = self._thread, None
            if self._timer is not None:
                self._timer.cancel()
            self._cond.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join(self._timeout)

    def arm(self, schedule_id: str, due_ns: int) -> None:
        """Fire ``schedule_id`` (made elsewhere, already stored) when ``due_ns`` comes."""
        self._add(schedule_id, due_ns)

    def known(self, run_id: str) -> bool:
        """Whether a session here or in the store already knows run ``run_id``."""
        return self._known(run_id)

    def _add(self, schedule_id: str, due_ns: int) -> None:
        with self._cond:
            if self._closed or self._armed.get(schedule_id) == due_ns:
                return
            if self._scanning and schedule_id and due_ns > self.wall_ns() + HORIZON_NS:
                return  # armed by the rescan before it is due
            self._armed[schedule_id] = due_ns
            heapq.heappush(self._heap, (due_ns, schedule_id))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="praxo-schedules", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()

    def _wake(self) -> None:
        with self._cond:
            self._timer, self._timer_due = None, None
            self._cond.notify_all()

    # -- the runner's thread ---------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            due = self._next_due()
            if due is None:
                return
            for schedule_id in due:
                try:
                    if schedule_id == _RESCAN:
                        self.load()
                    else:
                        self._fire(schedule_id)
                except Exception as exc:  # the store failed: try this one again, backed off
                    failures = self._failures.get(schedule_id, 0) + 1
                    self._failures[schedule_id] = failures
                    delay_ns = retry_delay_ns(failures)
                    logger.warning(
                        "schedule_fire_failed",
                        schedule_id=schedule_id,
                        attempt=failures,
                        retry_in_s=delay_ns / _NS,
                        error=repr(exc),
                    )
                    self._add(schedule_id, self.wall_ns() + delay_ns)
                else:
                    self._failures.pop(schedule_id, None)

    def _next_due(self) -> list[str] | None:
        """Wait until schedules are due and return their ids (None: the runner closed)."""
        with self._cond:
            while not self._closed:
                now = self.wall_ns()
                heap = self._heap
                if heap and heap[0][0] <= now:
                    due: list[str] = []
                    armed = self._armed
                    while heap and heap[0][0] <= now:
                        at, schedule_id = heapq.heappop(heap)
                        if armed.get(schedule_id) == at:
                            del armed[schedule_id]
                            due.append(schedule_id)
                    if due:
                        return due
                    continue
                if not heap:
                    self._cond.wait()
                elif self._clock is None:
                    self._cond.wait(min((heap[0][0] - now) / _NS, _IDLE_WAIT))
                else:
                    self._arm(heap[0][0], now)
                    # A clock moved on between the reading and the arming set the timer late.
                    if self.wall_ns() < heap[0][0]:
                        self._cond.wait()
            return None

    def _arm(self, due_ns: int, now_ns: int) -> None:
        """Set the runtime clock's one timer for ``due_ns`` (with the lock held)."""
        if self._timer_due == due_ns or self._clock is None:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_due = due_ns
        self._timer = self._clock.call_later((due_ns - now_ns) / _NS, self._wake)

    def _claim(self, schedule_id: str) -> tuple[ScheduleRow, ScheduleRow, str, bool] | None:
        """Claim the schedule's due fire: (row read, row claimed, its text, taken over) or None
        when there is nothing to fire now (cancelled, not due, held by a live claim, waiting
        for its agent: each re-armed as it needs)."""
        store = self.store
        for _ in range(3):
            row, text = read_row(store, schedule_id)
            if row is None or text is None:
                return None
            now = self.wall_ns()
            if row.next_fire_ns > now:
                self._add(schedule_id, row.next_fire_ns)
                return None
            held = row.lease_owner is not None and row.lease_owner != self.owner
            if held and row.lease_until_ns > now:
                self._add(schedule_id, row.lease_until_ns)
                return None
            if not self._agent_ready(row.agent):
                with self._cond:
                    self._waiting.setdefault(row.agent, set()).add(schedule_id)
                return None
            claimed = msgspec.structs.replace(
                row, lease_owner=self.owner, lease_until_ns=now + LEASE_NS
            )
            claimed_text = replace_row(store, text, claimed)
            if claimed_text is not None:
                return row, claimed, claimed_text, row.lease_owner is not None
        self._add(schedule_id, self.wall_ns() + _RETRY_NS)  # raced three times: later
        return None

    def _fire(self, schedule_id: str) -> None:
        claim = self._claim(schedule_id)
        if claim is None:
            return
        row, claimed, claimed_text, taken_over = claim
        now = self.wall_ns()
        # Only a schedule older than this runner can have missed fires while nothing ran (an
        # ``at`` already past when it was made fires, whatever its catch_up).
        since = self.started_ns if row.created_ns < self.started_ns else 0
        fires, next_ns = due_fires(row, now, since)
        run_id: str | None = row.last_run_id
        error: PraxoError | None = None
        for occurrence in fires:
            run_id = run_id_of(schedule_id, occurrence)
            if taken_over and self._known(run_id):
                continue  # submitted by the claim that never settled
            error = (self.submit or submit_fire)(
                self._front(), self._kernel, self._timeout, row, run_id, occurrence, now
            )
        outcome = "failed" if error is not None else ("fired" if fires else "skipped")
        if next_ns is None:
            delete_row(self.store, schedule_id)
            return
        settled = msgspec.structs.replace(
            claimed,
            next_fire_ns=next_ns,
            lease_owner=None,
            lease_until_ns=0,
            fired=claimed.fired + len(fires),
            last_fire_ns=fires[-1] if fires else claimed.last_fire_ns,
            last_run_id=run_id,
            last_outcome=outcome,
            last_error=None if error is None else error.code,
        )
        if replace_row(self.store, claimed_text, settled) is not None:
            self._add(schedule_id, next_ns)

    def _agent_ready(self, agent: str) -> bool:
        agents = self._kernel.agents
        return agent in agents if agent else bool(agents.view().factories)

    def _known(self, run_id: str) -> bool:
        """Whether a session here or in the store already knows run ``run_id``."""
        kernel = self._kernel
        if kernel.call(kernel.known, run_id, timeout=self._timeout) is not None:
            return True
        reply = decode(kernel.ask_store(encode(FindRun(run_id))).get(timeout=self._timeout))
        return isinstance(reply, RunFound) and reply.session_id is not None
