"""Two runtimes sharing one PostgreSQL store (two hosts): each occurrence fires on one of
them; a schedule one host made is armed by the other at its next rescan."""

from __future__ import annotations

import itertools
from collections.abc import Callable

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
