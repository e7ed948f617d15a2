"""Schedules survive the process: fires due while no runtime ran are made after a restart
with ``resume=True`` as ``catch_up`` says, once; a claim whose claimer died is taken over
when its lease runs out, without submitting its run twice."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import msgspec
from _schedule_helpers import START, TIMEOUT, Fires

from praxo_actors.agent import new_agent_options
from praxo_actors.memory._schedules import read_row, replace_row
from praxo_actors.runtime import Runtime
from praxo_actors.runtime._schedule._runner import run_id_of
from praxo_actors.testing import EchoModel, ManualClock

Start = Callable[..., tuple[Runtime, Fires]]
_NS = 1_000_000_000


def _at(seconds: float) -> int:
    return int((START.timestamp() + seconds) * _NS)


def test_fires_missed_while_down_are_made_once_per_catch_up(runtime: Start, tmp_path: Path) -> None:
    """Down from 0 s to 300.5 s: ``every=60`` fires once (the 300 s one) with "once", each of
    the five with "all", none with "skip"; a one-shot fires; a cancelled one does not. None
    fires before its agent is registered, and none twice."""
    path = tmp_path / "s.sqlite3"
    rt, _ = runtime(store=path, clock=ManualClock(START.timestamp()), durable=True)
    ids = {
        mode: rt.session(mode).schedule(mode, every=60, catch_up=mode).id
        for mode in ("once", "all", "skip")
    }
    ids["after"] = rt.session("after").schedule("after", after=30).id
    rt.session("gone").schedule("gone", every=60).cancel()
    rt.stop()

    rt2, fires = runtime(
        store=path, clock=ManualClock(START.timestamp() + 300.5), resume=True, register=False
    )
    rt2.statistics()
    assert fires.of() == []  # no agent yet: the due fires wait for it
    rt2.register_agent("default", lambda: new_agent_options(EchoModel()), durable=True)
    events = fires.wait(7)
    made = sorted((e.session_id, e.data["occurrence_ns"]) for e in events)
    assert made == sorted(
        [("after", _at(30)), ("once", _at(300))] + [("all", _at(s)) for s in range(60, 301, 60)]
    )
    for event in events:
        assert rt2.result(event.run_id, timeout=TIMEOUT).output == event.session_id
    rt2.statistics()
    listed = {s.session_id: s for s in rt2.schedules()}
    assert set(listed) == {"once", "all", "skip"}
    assert listed["skip"].next_fire == START + dt.timedelta(seconds=360)
    assert listed["skip"].fired == 0 and listed["skip"].last_outcome == "skipped"
    assert listed["all"].fired == 5 and listed["once"].fired == 1
    assert len(fires.of()) == 7


def test_a_stopped_runtime_without_resume_leaves_old_schedules_alone(
    runtime: Start, tmp_path: Path
) -> None:
    """``resume=False`` fires nothing a previous process scheduled (it still lists it)."""
    path = tmp_path / "s.sqlite3"
    rt, _ = runtime(store=path, clock=ManualClock(START.timestamp()))
    rt.session("s").schedule("x", after=1)
    rt.stop()
    rt2, fires = runtime(store=path, clock=ManualClock(START.timestamp() + 10))
    rt2.statistics()
    assert fires.of() == [] and len(rt2.schedules()) == 1


def test_a_dead_claimers_fire_waits_for_its_lease_and_is_not_submitted_twice(
    runtime: Start, clock: ManualClock
) -> None:
    """A fire claimed by a host that died after submitting its run: another runner takes it
    over only when the lease has run out, finds the run known and submits nothing again."""
    calls: list[str] = []

    def model(request: object) -> object:
        calls.append("call")
        return EchoModel()(request)  # type: ignore[arg-type]

    rt, fires = runtime(clock=clock, register=False)
    rt.register_agent("default", lambda: new_agent_options(model))  # type: ignore[arg-type]
    handle = rt.session("s")
    schedule = handle.schedule("tick", every=60)
    row, text = read_row(rt.store, schedule.id)  # type: ignore[arg-type]
    assert row is not None and text is not None
    dead = msgspec.structs.replace(row, lease_owner="dead-host", lease_until_ns=_at(90))
    assert replace_row(rt.store, text, dead) is not None  # type: ignore[arg-type]
    run_id = run_id_of(schedule.id, _at(60))
    handle._submit(run_id, "tick", None, None).get(timeout=TIMEOUT)  # what the dead host sent
    clock.advance(60)
    rt.statistics()
    assert fires.of() == []  # the lease holds until 90 s
    clock.advance(30)
    for _ in range(1000):  # the takeover settles the row without an event: read it
        (listed,) = rt.schedules()
        if listed.fired == 1:
            break
        rt.statistics()
    assert listed.fired == 1 and listed.last_run_id == run_id
    assert listed.next_fire == START + dt.timedelta(seconds=120)
    assert fires.of() == [] and len(calls) == 1
    clock.advance(30)
    (event,) = fires.wait(1)
    assert event.data["occurrence_ns"] == _at(120)


def test_a_resuming_runtime_keeps_only_near_fires_in_memory(
    runtime: Start, clock: ManualClock
) -> None:
    """With ``resume=True`` a fire more than an hour away is not held in memory; the store is
    read again each half hour, and the fire is made on time."""
    from praxo_actors.runtime._schedule._runner import HORIZON_NS

    rt, fires = runtime(clock=clock, resume=True)
    schedule = rt.session("s").schedule("later", after=3 * 3600)
    assert schedule.id not in rt._schedules._armed
    for _ in range(5):  # 2.5 hours, by half hours: each step rescans
        clock.advance(HORIZON_NS / 2e9)
        rt.statistics()
    assert fires.of() == []
    clock.advance(HORIZON_NS / 2e9)
    (event,) = fires.wait(1)
    assert event.data["occurrence_ns"] == _at(3 * 3600)
