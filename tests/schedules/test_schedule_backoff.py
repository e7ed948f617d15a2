"""A fire the store fails is tried again with a capped exponential backoff (1 s, doubling, at
most 30 s), counted again from 1 s after a success; each failed attempt is logged once; once
the store answers, the occurrence fires exactly once."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from _helpers import captured_logs
from _schedule_helpers import START, TIMEOUT, Fires

from praxo_actors import PraxoError
from praxo_actors.codes import STORE_FAILED
from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._schedules import SCHEDULES
from praxo_actors.runtime import Runtime
from praxo_actors.runtime._schedule._runner import retry_delay_ns
from praxo_actors.testing import ManualClock
from praxo_actors.testing._eventually import eventually

Start = Callable[..., tuple[Runtime, Fires]]
_NS = 1_000_000_000


def _at(seconds: float) -> int:
    return int((START.timestamp() + seconds) * _NS)


class FlakyStore(InMemoryStore):
    """An in-memory store whose next ``failing`` reads of a schedule fail STORE_FAILED; it
    records the clock's reading (seconds after START) at each failed read."""

    def __init__(self, clock: ManualClock) -> None:
        super().__init__()
        self.clock = clock
        self.failing = 0
        self.failed: list[float] = []

    def _read_texts(self, namespace: Any, keys: list[str]) -> list[str | None]:
        if namespace == SCHEDULES and self.failing:
            self.failing -= 1
            self.failed.append(self.clock.now() - START.timestamp())
            raise PraxoError(STORE_FAILED, "the database is down")
        return super()._read_texts(namespace, keys)


def _step_through(
    rt: Runtime, clock: ManualClock, store: FlakyStore, sid: str, at: list[int]
) -> None:
    """Move the clock to each time of ``at`` (seconds after START) once the runner armed the
    schedule's next attempt for exactly that time (an attempt armed earlier never matches)."""
    runner = rt._schedules
    for n, seconds in enumerate(at):
        due = _at(seconds)
        eventually(lambda due=due: runner._armed.get(sid) == due, what=f"attempt at {seconds} s")
        clock.advance(seconds - (clock.now() - START.timestamp()))
        if n < len(at) - 1:  # each attempt but the last fails
            eventually(lambda n=n: len(store.failed) > n, what=f"attempt {n + 1} made")


def test_the_delay_doubles_from_one_second_up_to_thirty() -> None:
    assert [retry_delay_ns(n) // _NS for n in range(1, 9)] == [1, 2, 4, 8, 16, 30, 30, 30]
    assert retry_delay_ns(10_000) == 30 * _NS


def test_a_failing_store_is_retried_backed_off_and_the_fire_happens_once(
    runtime: Start, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    """``after=10`` with a store that fails six reads: the attempts come at 10, 11, 13, 17, 25
    and 41 s (waits of 1, 2, 4, 8, 16 s, then the 30 s cap), the seventh at 71 s fires the
    occurrence of 10 s, once; each failure is logged once with its attempt and wait."""
    store = FlakyStore(clock)
    rt, fires = runtime(clock=clock, store=store)
    handle = rt.session("s")
    schedule = handle.schedule("ping", after=10)
    store.failing = 6
    with captured_logs(caplog, "praxo_actors.runtime") as logs:
        _step_through(rt, clock, store, schedule.id, [10, 11, 13, 17, 25, 41, 71])
        (event,) = fires.wait(1)
    assert store.failed == [10, 11, 13, 17, 25, 41]
    assert event.data["occurrence_ns"] == _at(10)
    assert handle.result(event.run_id, timeout=TIMEOUT).output == "ping"
    failed = [entry for entry in logs if entry["event"] == "schedule_fire_failed"]
    assert [(e["attempt"], e["retry_in_s"]) for e in failed] == [
        (1, 1.0),
        (2, 2.0),
        (3, 4.0),
        (4, 8.0),
        (5, 16.0),
        (6, 30.0),
    ]
    assert all(e["schedule_id"] == schedule.id and "STORE_FAILED" in e["error"] for e in failed)
    clock.advance(600)
    rt.statistics()
    assert len(fires.of()) == 1 and fires.of("schedule.failed") == []
    assert rt.schedules() == []
    assert [m.content for m in handle.history()].count("ping") == 2  # one run: asked, answered


def test_a_success_starts_the_backoff_again(runtime: Start, clock: ManualClock) -> None:
    """``every=60``: the 60 s fire fails twice (attempts at 60, 61, 63 s); the 120 s fire fails
    once and is tried again 1 s later, not 8 s: the count starts again after a success."""
    store = FlakyStore(clock)
    rt, fires = runtime(clock=clock, store=store)
    schedule = rt.session("s").schedule("tick", every=dt.timedelta(minutes=1))
    store.failing = 2
    _step_through(rt, clock, store, schedule.id, [60, 61, 63])
    fires.wait(1)
    store.failing = 1
    _step_through(rt, clock, store, schedule.id, [120, 121])
    fires.wait(2)
    assert store.failed == [60, 61, 120]
    assert [e.data["occurrence_ns"] for e in fires.of()] == [_at(60), _at(120)]
