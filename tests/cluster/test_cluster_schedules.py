"""Schedules on ClusterRuntime: made, listed and cancelled through the cluster; each fire runs
on the host its session routes to; with that host SIGKILLed at a fire, every occurrence is
committed once (the session's history names each run once) and none is lost."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections import Counter
from typing import Any

import pytest

from praxo_actors import PraxoError
from praxo_actors.cluster import ClusterRuntime
from praxo_actors.models import Event
from praxo_actors.runtime._schedule._runner import run_id_of
from praxo_actors.testing._eventually import eventually

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.timeout(900)

TIMEOUT = 120.0  # any one wait; generous for a machine whose cores are busy
SESSIONS = 9  # three a host, or so
RECOVERY = 300.0  # a restarted host, a lease (30 s) run out and the fires caught up


def _committed(cluster: ClusterRuntime, sid: str) -> list[str]:
    """The run ids the session's history names, in commit order."""
    history = cluster.session(sid).history(TIMEOUT)
    out = [m.content for m in history if m.role == "assistant" and isinstance(m.content, str)]
    return [text.removeprefix("run ") for text in out]


def _pid(host: Any) -> int:
    pid: int = ray.get(host.__ray_call__.remote(lambda _host: os.getpid()), timeout=TIMEOUT)
    return pid


class _Fired:
    """The ``schedule.fired`` events seen, and a signal at the n-th occurrence."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.events: list[Event] = []
        self.reached = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self._lock:
            self.events.append(event)
            if len({e.data["occurrence_ns"] for e in self.events}) >= self.at:
                self.reached.set()


def test_schedules_fire_on_their_sessions_hosts(ray_cluster: Any, cluster_store: Any) -> None:
    """Every host claims fires, and each fire's run is run by its session's host; listing and
    cancelling go through the cluster."""
    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=3, schema=schema, idle_timeout=None)
    try:
        cluster.register_agent("default", "_schedule_agents:named")
        sids = [f"wake-{i}" for i in range(SESSIONS)]
        fired = _Fired(at=len(sids))
        cluster.events.subscribe(fired, "schedule.fired")
        made = {sid: cluster.session(sid).schedule("wake up", after=1) for sid in sids}
        session = cluster.session(sids[0])
        kept = session.schedule("later", after=3600, key="later")
        assert session.schedule("later", every=60, key="later").id == kept.id
        assert {s.id for s in cluster.schedules()} >= {made[sids[0]].id, kept.id}
        assert fired.reached.wait(TIMEOUT)
        for event in fired.events:
            assert event.run_id == run_id_of(made[event.session_id].id, event.data["occurrence_ns"])
            result = cluster.session(event.session_id).result(event.run_id, timeout=TIMEOUT)
            assert result.output == f"run {event.run_id}"
        assert sorted(e.session_id for e in fired.events) == sorted(sids)
        per_host = cluster.statistics().hosts
        routed = Counter(cluster.host_of(sid) for sid in sids)
        assert {h: s.runs_completed for h, s in per_host.items()} == {
            h: routed[h] for h in per_host
        }
        assert [s.id for s in session.schedules()] == [kept.id]  # the one-shot is gone

        async def twins() -> tuple[list[str], list[str], str]:
            again = await session.aschedule("later", after=60, key="later")
            listed = [s.id for s in await session.aschedules()]
            everywhere = [s.id for s in await cluster.aschedules(sids[0])]
            return listed, everywhere, again.id

        assert asyncio.run(twins()) == ([kept.id], [kept.id], kept.id)
        kept.cancel()
        assert cluster.schedules() == []
        with pytest.raises(PraxoError) as info:
            kept.cancel()
        assert info.value.code == "SCHEDULE_NOT_FOUND"
        with pytest.raises(PraxoError) as info:
            session.schedule("never", after=1, every=1)
        assert info.value.code == "SCHEDULE_INVALID"
    finally:
        cluster.stop()


def test_each_occurrence_once_with_the_sessions_host_killed_at_a_fire(
    ray_cluster: Any, cluster_store: Any
) -> None:
    """A schedule every 2 s on a durable agent; the session's host is SIGKILLed as the second
    occurrence fires (Ray restarts it). The fires go on; once three more have settled, each
    occurrence up to the last settled is committed in the session's history, once, in order."""
    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=3, schema=schema, idle_timeout=None)
    try:
        cluster.register_agent("default", "_schedule_agents:named", durable=True)
        fired = _Fired(at=2)
        cluster.events.subscribe(fired, "schedule.fired")
        sid = "tick-1"
        made = cluster.session(sid).schedule("tick", every=2, catch_up="all")
        assert fired.reached.wait(TIMEOUT)
        first_ns = min(e.data["occurrence_ns"] for e in fired.events)
        host = cluster._hosts[cluster.host_of(sid)]
        pid = _pid(host)
        os.kill(pid, signal.SIGKILL)

        def settled() -> int | None:
            try:
                (row,) = cluster.schedules(sid)
            except PraxoError:  # a host restarting: ask again
                return None
            return row.fired if row.fired >= 5 else None

        count = eventually(settled, timeout=RECOVERY, interval=0.2, what="five settled fires")
        made.cancel()

        def occurrence(k: int) -> str:
            return run_id_of(made.id, first_ns + 2_000_000_000 * k)

        expected = [occurrence(k) for k in range(count)]

        def all_committed() -> list[str] | None:
            try:
                runs = _committed(cluster, sid)
            except (PraxoError, ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                return None  # the session's host restarting
            return runs if set(expected) <= set(runs) else None

        runs = eventually(all_committed, timeout=RECOVERY, interval=0.2, what="every occurrence")
        assert len(runs) == len(set(runs)), f"an occurrence committed twice: {runs}"
        # In order and none lost (after the settled ones, those fired before the cancel).
        assert runs == [occurrence(k) for k in range(len(runs))]
        assert _pid(host) != pid  # the host did die, and Ray started it again
    finally:
        cluster.stop()
