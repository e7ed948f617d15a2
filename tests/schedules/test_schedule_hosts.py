"""Two runtimes sharing one PostgreSQL store (two hosts): each occurrence fires on one of
them; a schedule one host made is armed by the other at its next rescan; a fire whose
claimer died is made by another once its lease has run out."""

from __future__ import annotations

import datetime as dt
import itertools
import threading
from collections.abc import Callable
from typing import Any

import pytest
from _schedule_helpers import START, TIMEOUT, Fires

from praxo_actors.runtime import Runtime
from praxo_actors.runtime._schedule._runner import RESCAN_NS
from praxo_actors.testing import ManualClock

Start = Callable[..., tuple[Runtime, Fires]]
_SCHEMAS = itertools.count()


def test_each_occurrence_fires_on_one_host(runtime: Start, postgres_dsn: str) -> None:
    """Both hosts arm the schedule; over five periods each occurrence fires once in all,
    whichever host claims it."""
    from praxo_actors.memory import PostgresStore

    schema = f"praxo_test_hosts_{next(_SCHEMAS)}"
    stores = [PostgresStore(postgres_dsn, schema=schema) for _ in range(2)]
    clocks = [ManualClock(START.timestamp()) for _ in range(2)]
    try:
        a, fires_a = runtime(store=stores[0], clock=clocks[0], resume=True)
        schedule = a.session("s").schedule("tick", every=60)
        b, fires_b = runtime(store=stores[1], clock=clocks[1], resume=True)  # loads it
        for n in range(1, 6):
            for clock in clocks:
                clock.advance(60)

            def count(n: int = n) -> bool:
                # Settled, not only fired: a step of 60 s while a claim (30 s) is held would
                # be a host stalled past its lease.
                return b.schedules()[0].fired >= n

            for _ in range(2000):
                if count():
                    break
                a.statistics()
                b.statistics()
            assert count(), f"occurrence {n} did not fire"
        a.statistics()
        b.statistics()
        made = sorted(e.data["occurrence_ns"] for e in fires_a.of() + fires_b.of())
        assert made == [int((START.timestamp() + 60 * m) * 1e9) for m in range(1, 6)]
        (listed,) = b.schedules()
        assert listed.id == schedule.id and listed.fired == 5
    finally:
        for rt in (locals().get("a"), locals().get("b")):
            if rt is not None:
                rt.stop()
        for store in stores:
            store.close()


def test_a_schedule_made_on_another_host_is_armed_at_the_rescan(
    runtime: Start, postgres_dsn: str
) -> None:
    """A host started before the schedule was made fires it after its next rescan."""
    from praxo_actors.memory import PostgresStore

    schema = f"praxo_test_hosts_{next(_SCHEMAS)}"
    stores = [PostgresStore(postgres_dsn, schema=schema) for _ in range(2)]
    try:
        clock = ManualClock(START.timestamp())
        quiet, fires = runtime(store=stores[0], clock=clock, resume=True)
        other, _ = runtime(store=stores[1], clock=ManualClock(START.timestamp()), resume=True)
        other.session("s").schedule("ping", after=1)
        other.stop()  # its maker is gone before the fire
        clock.advance(1)
        quiet.statistics()
        assert fires.of() == []  # not armed here yet
        clock.advance(RESCAN_NS / 1e9)
        (event,) = fires.wait(1)
        assert quiet.result(event.run_id, timeout=TIMEOUT).output == "ping"
    finally:
        for store in stores:
            store.close()


def test_a_host_that_dies_between_claim_and_submit_leaves_the_fire_to_another(
    runtime: Start, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Host A claims the fire and dies before it submits: host B makes the fire once A's
    lease has run out (not before), under the occurrence's run id, and only once."""
    from praxo_actors.memory import PostgresStore
    from praxo_actors.runtime._schedule import _runner as runner_module
    from praxo_actors.runtime._schedule._runner import LEASE_NS, run_id_of

    schema = f"praxo_test_hosts_{next(_SCHEMAS)}"
    stores = [PostgresStore(postgres_dsn, schema=schema) for _ in range(2)]
    clock_a, clock_b = ManualClock(START.timestamp()), ManualClock(START.timestamp())
    try:
        a, fires_a = runtime(store=stores[0], clock=clock_a, resume=True)
        schedule = a.session("s").schedule("tick", after=10)
        runner_a = a._schedules
        claimed = threading.Event()

        real_submit = runner_module.submit_fire

        def die_on_a(front: object, *args: Any) -> Any:
            if front is not a:
                return real_submit(front, *args)  # type: ignore[arg-type]
            runner_a._closed = True  # the host is gone: its runner makes nothing more
            claimed.set()
            raise RuntimeError("host died")

        monkeypatch.setattr(runner_module, "submit_fire", die_on_a)
        clock_a.advance(10)
        assert claimed.wait(TIMEOUT)
        (row,) = a.schedules()
        assert row.next_fire == START + dt.timedelta(seconds=10) and row.fired == 0

        b, fires_b = runtime(store=stores[1], clock=clock_b, resume=True)
        clock_b.advance(10)
        b.statistics()
        assert fires_b.of() == []  # A's lease holds
        clock_b.advance(LEASE_NS / 1e9)
        (event,) = fires_b.wait(1)
        assert event.run_id == run_id_of(schedule.id, int((START.timestamp() + 10) * 1e9))
        assert b.result(event.run_id, timeout=TIMEOUT).output == "tick"
        for _ in range(1000):  # the one-shot row goes once settled
            if b.schedules() == []:
                break
            b.statistics()
        assert b.schedules() == [] and fires_a.of() == [] and len(fires_b.of()) == 1
    finally:
        for store in stores:
            store.close()
