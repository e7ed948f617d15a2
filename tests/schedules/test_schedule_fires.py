"""Schedules on one runtime, driven by a ManualClock: each kind fires when due, as a run of
its session, once per occurrence; a key makes one schedule; a cancelled one fires no more."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from _schedule_helpers import START, TIMEOUT, Fires

from praxo_actors.memory._inbox import INBOX
from praxo_actors.runtime import Runtime, Schedule
from praxo_actors.testing import ManualClock

Start = Callable[..., tuple[Runtime, Fires]]


def _ns(when: dt.datetime) -> int:
    return int(when.timestamp()) * 1_000_000_000


def test_after_fires_once_as_a_run_and_is_then_gone(runtime: Start, clock: ManualClock) -> None:
    """``after=30`` fires at 30 s (not before) under a run id naming the schedule and the
    occurrence; the run answers; the one-shot schedule is then removed."""
    rt, fires = runtime(clock=clock)
    handle = rt.session("s")
    schedule = handle.schedule("ping", after=30)
    assert isinstance(schedule, Schedule) and schedule.kind == "after"
    assert schedule.next_fire == START + dt.timedelta(seconds=30)
    clock.advance(29)
    rt.statistics()  # a loop round trip: nothing was due
    assert fires.of() == [] and len(rt.schedules()) == 1
    clock.advance(1)
    (event,) = fires.wait(1)
    occurrence = _ns(START + dt.timedelta(seconds=30))
    assert event.run_id == f"{schedule.id}@{occurrence}"
    assert event.data == {"schedule_id": schedule.id, "occurrence_ns": occurrence}
    assert handle.result(event.run_id, timeout=TIMEOUT).output == "ping"
    assert rt.schedules() == [] and handle.schedules() == []


def test_every_fires_each_period_and_records_the_last_fire(
    runtime: Start, clock: ManualClock
) -> None:
    """``every=60`` fires at 60, 120 and 180 s when the clock passes them; the listing says
    how many fired, the last run and the next fire."""
    rt, fires = runtime(clock=clock)
    handle = rt.session("s")
    schedule = handle.schedule("tick", every=dt.timedelta(minutes=1))
    for n in (1, 2, 3):
        clock.advance(60)
        fires.wait(n)
    runs = [e.run_id for e in fires.of()]
    assert runs == [f"{schedule.id}@{_ns(START + dt.timedelta(minutes=m))}" for m in (1, 2, 3)]
    for run_id in runs:
        assert handle.result(run_id, timeout=TIMEOUT).output == "tick"

    def settled() -> Schedule:
        # The row is settled just after the last event: read it until it says so.
        for _ in range(1000):
            (listed,) = handle.schedules()
            if listed.fired == 3:
                return listed
            rt.statistics()
        pytest.fail("the third fire was never recorded")

    listed = settled()
    assert listed.last_run_id == runs[-1] and listed.last_outcome == "fired"
    assert listed.next_fire == START + dt.timedelta(minutes=4)


def test_a_big_step_fires_every_occurrence_it_passes(runtime: Start, clock: ManualClock) -> None:
    """Occurrences due while the runtime ran are each fired, even when one step passes five."""
    rt, fires = runtime(clock=clock)
    rt.session("s").schedule("tick", every=10)
    clock.advance(50)
    assert len(fires.wait(5)) == 5
    clock.advance(0)
    rt.statistics()
    assert len(fires.of()) == 5


def test_at_in_the_past_fires_at_once_and_at_in_the_future_waits(
    runtime: Start, clock: ManualClock
) -> None:
    """An aware ``at`` fires when the clock reaches it; one already past fires at once."""
    rt, fires = runtime(clock=clock)
    handle = rt.session("s")
    later = handle.schedule("later", at=START + dt.timedelta(hours=1))
    handle.schedule("now", at=START - dt.timedelta(hours=1))
    (first,) = fires.wait(1)
    assert handle.result(first.run_id, timeout=TIMEOUT).output == "now"
    clock.advance(3600)
    second = fires.wait(2)[1]
    assert second.data["schedule_id"] == later.id


def test_an_at_already_past_fires_even_with_skip(runtime: Start, clock: ManualClock) -> None:
    """``catch_up="skip"`` skips fires missed while no runtime ran, not a time already past
    when the schedule is made."""
    rt, fires = runtime(clock=clock)
    rt.session("s").schedule("now", at=START - dt.timedelta(days=1), catch_up="skip")
    (event,) = fires.wait(1)
    assert rt.result(event.run_id, timeout=TIMEOUT).output == "now"


def test_cron_reads_its_expression_in_its_time_zone(runtime: Start, clock: ManualClock) -> None:
    """``0 9 * * *`` in Europe/Paris fires at 08:00 UTC in January (UTC+1)."""
    rt, fires = runtime(clock=clock)
    schedule = rt.session("s").schedule("digest", cron="0 9 * * *", tz="Europe/Paris")
    assert schedule.next_fire == START + dt.timedelta(hours=8)
    assert schedule.cron == "0 9 * * *" and schedule.tz == "Europe/Paris"
    clock.advance(8 * 3600 - 1)
    rt.statistics()
    assert fires.of() == []
    clock.advance(1)
    (event,) = fires.wait(1)
    assert event.data["occurrence_ns"] == _ns(START + dt.timedelta(hours=8))


def test_cron_follows_summer_time(runtime: Start) -> None:
    """In July the same expression fires at 07:00 UTC (Paris is UTC+2)."""
    july = dt.datetime(2030, 7, 1, tzinfo=dt.UTC)
    rt, _ = runtime(clock=ManualClock(july.timestamp()))
    schedule = rt.session("s").schedule("digest", cron="0 9 * * *", tz="Europe/Paris")
    assert schedule.next_fire == july + dt.timedelta(hours=7)


def test_a_key_makes_one_schedule_per_session(runtime: Start, clock: ManualClock) -> None:
    """The same key returns the schedule already stored (its arguments, its id); another
    session's same key is another schedule."""
    rt, fires = runtime(clock=clock)
    first = rt.session("s").schedule("a", every=60, key="daily")
    again = rt.session("s").schedule("b", every=5, key="daily")
    other = rt.session("t").schedule("c", every=60, key="daily")
    assert again.id == first.id and again.input == "a" and again.every == 60
    assert other.id != first.id
    assert {s.id for s in rt.schedules()} == {first.id, other.id}
    clock.advance(60)
    assert sorted(e.session_id for e in fires.wait(2)) == ["s", "t"]
    clock.advance(0)
    rt.statistics()
    assert len(fires.of()) == 2  # the key's second call armed nothing more


def test_cancel_stops_future_fires(runtime: Start, clock: ManualClock) -> None:
    """A cancelled schedule fires no more and is not listed; cancelling again is
    SCHEDULE_NOT_FOUND."""
    rt, fires = runtime(clock=clock)
    handle = rt.session("s")
    schedule = handle.schedule("tick", every=60)
    clock.advance(60)
    fires.wait(1)
    schedule.cancel()
    assert handle.schedules() == []
    clock.advance(600)
    rt.statistics()
    assert len(fires.of()) == 1
    with pytest.raises(Exception) as info:
        schedule.cancel()
    assert getattr(info.value, "code", None) == "SCHEDULE_NOT_FOUND"


def test_a_durable_agents_fire_is_accepted_into_the_inbox(
    runtime: Start, clock: ManualClock
) -> None:
    """A fire of a durable agent's session submits a durable run, found by its id."""
    rt, fires = runtime(clock=clock, durable=True)
    handle = rt.session("s")
    handle.schedule("ping", after=1)
    clock.advance(1)
    (event,) = fires.wait(1)
    assert rt.result(event.run_id, timeout=TIMEOUT).output == "ping"
    assert list(rt.store.search(INBOX)) == []


def test_a_passivated_sessions_schedule_activates_it(runtime: Start, clock: ManualClock) -> None:
    """The runtime, not the session, holds the timer: a passivated session is activated by
    its schedule's fire."""
    rt, fires = runtime(clock=clock)
    handle = rt.session("s")
    handle.run("hello").get(timeout=TIMEOUT)
    handle.schedule("wake", after=60)
    assert handle.passivate(timeout=TIMEOUT) and not handle.live
    clock.advance(60)
    (event,) = fires.wait(1)
    assert handle.result(event.run_id, timeout=TIMEOUT).output == "wake"
    assert [m.content for m in handle.history(timeout=TIMEOUT)][-2:] == ["wake", "wake"]


def test_the_async_twins(runtime: Start, clock: ManualClock) -> None:
    """``aschedule``, ``aschedules`` and ``acancel`` do what their plain twins do."""
    rt, _ = runtime(clock=clock)
    handle = rt.session("s")

    async def main() -> list[Any]:
        schedule = await handle.aschedule("x", every=60, key="k")
        listed = [await handle.aschedules(), await rt.aschedules("s")]
        await schedule.acancel()
        listed.append(await rt.aschedules())
        return listed

    mine, all_of_s, after = asyncio.run(main())
    assert [s.key for s in mine] == ["k"] and mine == all_of_s and after == []


def test_on_the_runtimes_own_loop_the_plain_forms_refuse_and_the_twins_work(
    clock: ManualClock,
) -> None:
    """On the loop of ``Runtime.open``, ``schedule``, ``schedules`` and ``cancel`` fail
    RUNTIME_BLOCKING_CALL (they read the store); their ``a``-twins do the work."""
    from praxo_actors import PraxoError
    from praxo_actors.agent import new_agent_options
    from praxo_actors.testing import EchoModel

    async def main() -> list[str]:
        codes = []
        async with Runtime.open(clock=clock, idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", lambda: new_agent_options(EchoModel()))
            handle = rt.session("s")
            schedule = await handle.aschedule("x", every=60)
            for call in (
                lambda: handle.schedule("x", every=60),
                rt.schedules,
                schedule.cancel,
            ):
                with pytest.raises(PraxoError) as info:
                    call()
                codes.append(info.value.code)
            await schedule.acancel()
            assert await rt.aschedules() == []
        return codes

    assert asyncio.run(main()) == ["RUNTIME_BLOCKING_CALL"] * 3
