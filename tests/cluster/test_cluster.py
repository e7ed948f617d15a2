"""ClusterRuntime: session hosts on a local three-node Ray cluster over PostgreSQL."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from praxo_actors import AgentError, PraxoError
from praxo_actors.cluster import ClusterRuntime
from praxo_actors.models import Event
from praxo_actors.testing._eventually import eventually

ray = pytest.importorskip("ray")
# A cluster's tests on a machine whose cores are busy elsewhere take minutes (the killed
# host's 100 durable runs are resumed one by one): the suite's 120 s would cut them off.
pytestmark = pytest.mark.timeout(900)
TIMEOUT = 120.0  # every call and each host's runtime (not its 10 s default): a busy machine


def _alive_actors() -> int:
    from ray._private.state import state

    return sum(1 for a in state.actor_table(None).values() if a.get("State") == "ALIVE")


def test_sessions_spread_over_hosts_and_commit(ray_cluster: Any, cluster_store: Any) -> None:
    dsn, schema = cluster_store
    before = _alive_actors()
    cluster = ClusterRuntime.start(dsn, hosts=3, schema=schema, idle_timeout=None, timeout=TIMEOUT)
    try:
        cluster.register_agent("default", "cluster_agents:echo")
        sessions = [f"s{i}" for i in range(3000)]
        for round in range(2):
            futures = [cluster.session(sid).run(f"{sid}/{round}") for sid in sessions]
            outputs = [f.get(timeout=TIMEOUT).output for f in futures]
            assert outputs == [f"echo: {sid}/{round}" for sid in sessions]
        hosts = {cluster.host_of(sid) for sid in sessions}
        assert hosts == {"host-0", "host-1", "host-2"}
        stats = cluster.statistics()
        assert stats.runs_completed == 6000 and stats.runs_failed == 0
        assert set(stats.hosts) == hosts
        assert sum(s.runs_completed for s in stats.hosts.values()) == 6000
        history = cluster.session("s7").history(TIMEOUT)
        assert [m.content for m in history] == ["s7/0", "echo: s7/0", "s7/1", "echo: s7/1"]
    finally:
        cluster.stop()
    # stop() left no actor behind (Ray marks a killed actor dead a moment after the kill)
    eventually(lambda: _alive_actors() == before, interval=0.05, what="no actor left")


def test_runs_sent_without_waiting_commit_in_submission_order(
    ray_cluster: Any, cluster_store: Any
) -> None:
    """Runs sent to a session while its earlier ones are in flight commit in the order they
    were sent, although Ray starts a host's calls out of order."""
    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=3, schema=schema, idle_timeout=None, timeout=TIMEOUT)
    try:
        cluster.register_agent("default", "cluster_agents:echo")
        sessions, rounds = [f"o{i}" for i in range(30)], 40
        futures = []
        for n in range(rounds):
            futures.extend(cluster.session(sid).run(f"{sid}/{n}") for sid in sessions)
            if n % 2:  # two runs of each session in flight, then the next two sent
                for future in futures[-2 * len(sessions) :]:
                    future.get(timeout=TIMEOUT)
        for future in futures:
            future.get(timeout=TIMEOUT)
        for sid in sessions:
            users = [m.content for m in cluster.session(sid).history(TIMEOUT) if m.role == "user"]
            assert users == [f"{sid}/{n}" for n in range(rounds)]
    finally:
        cluster.stop()


def test_a_host_killed_mid_burst(ray_cluster: Any, cluster_store: Any) -> None:
    """Durable runs in flight on the killed host finish on another; nothing acknowledged is
    lost; every run ends completed or with a code."""
    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=3, schema=schema, idle_timeout=None, timeout=TIMEOUT)
    try:
        cluster.register_agent("default", "cluster_agents:slow", durable=True)
        sessions = [f"k{i}" for i in range(300)]
        victim = cluster.host_of("k0")
        in_flight = threading.Event()

        def on_tool(event: Event) -> None:
            if cluster.host_of(event.session_id) == victim:
                in_flight.set()  # a run on the victim is in its tool (which takes 0.2 s)

        resumed = threading.Event()
        cluster.events.subscribe(on_tool, pattern="tool.started")
        cluster.events.subscribe(lambda _event: resumed.set(), pattern="run.resumed")
        futures = {sid: cluster.session(sid).run(f"job {sid}") for sid in sessions}
        assert in_flight.wait(TIMEOUT)
        ray.kill(cluster._hosts[victim], no_restart=False)  # Ray restarts it
        outcomes: dict[str, Any] = {}
        for sid, future in futures.items():
            try:
                outcomes[sid] = future.get(timeout=TIMEOUT).output
            except (AgentError, PraxoError) as exc:
                outcomes[sid] = exc.code
        # The kill cut runs off: journaled ones resumed on another host (run.resumed).
        assert "SESSION_CRASHED" in outcomes.values() or resumed.wait(TIMEOUT)
        completed = [sid for sid, out in outcomes.items() if out == f'done: "job {sid}"']
        codes = {out for out in outcomes.values() if not str(out).startswith("done:")}
        assert codes <= {"SESSION_CRASHED"}, codes
        assert len(completed) >= 290, f"{len(completed)} completed, codes {codes}"
        for sid in completed[:50]:
            users = [m.content for m in cluster.session(sid).history(TIMEOUT) if m.role == "user"]
            assert users == [f"job {sid}"]
    finally:
        cluster.stop()


def test_a_stale_host_cannot_overwrite_a_newer_commit(ray_cluster: Any, cluster_store: Any) -> None:
    """Host A holds a session live; host B commits to it (a takeover); A's next commit is
    refused with SESSION_CONFLICT and A reloads, building on B's."""
    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=2, schema=schema, idle_timeout=None, timeout=TIMEOUT)
    try:
        cluster.register_agent("default", "cluster_agents:echo")
        owner = cluster.host_of("p")
        other = next(name for name in cluster._hosts if name != owner)
        assert cluster.session("p").run("a1").get(timeout=TIMEOUT).output == "echo: a1"
        taken = cluster._hosts[other].run.remote("p", "default", "b1", None, "run_b1")
        assert ray.get(taken, timeout=TIMEOUT)[0] == "ok"
        with pytest.raises(PraxoError) as stale:
            cluster.session("p").run("a2").get(timeout=TIMEOUT)
        assert stale.value.code == "SESSION_CONFLICT"
        assert cluster.session("p").run("a3").get(timeout=TIMEOUT).output == "echo: a3"
        users = [m.content for m in cluster.session("p").history(TIMEOUT) if m.role == "user"]
        assert users == ["a1", "b1", "a3"]
    finally:
        cluster.stop()


def test_a_durable_run_finished_by_another_host_answers_its_caller(
    ray_cluster: Any, cluster_store: Any, tmp_path: Path
) -> None:
    """Another host takes a durable run over while its first host still runs it, and commits
    it first; the first host's copy then cannot journal, and the caller still gets the run's
    result (the one committed), not that copy's STORE_FAILED."""
    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=2, schema=schema, idle_timeout=None, timeout=TIMEOUT)
    try:
        cluster.register_agent("held", "cluster_agents:held", durable=True)
        owner = cluster.host_of("t")
        other = next(name for name in cluster._hosts if name != owner)
        holding = threading.Event()
        cluster.events.subscribe(lambda _event: holding.set(), pattern="tool.started")
        flag = tmp_path / "flag"
        future = cluster.session("t", "held").run(str(flag))
        assert holding.wait(TIMEOUT)  # the first attempt waits in its tool, on the owner
        # The other host resumes the run from its journal (as when it takes the session
        # over) and commits it, its tool's second attempt returning at once.
        taken = cluster._hosts[other].result.remote("t", "held", future.run_id, TIMEOUT)
        assert ray.get(taken, timeout=TIMEOUT)[0] == "ok"
        flag.touch()  # the owner's copy goes on, and finds the run committed
        assert future.get(timeout=TIMEOUT).output == 'held: "attempt 2"'
        users = [m.content for m in cluster.session("t", "held").history(TIMEOUT)]
        assert users.count(str(flag)) == 1
    finally:
        cluster.stop()


def test_events_of_every_host_reach_a_subscriber_here(ray_cluster: Any, cluster_store: Any) -> None:
    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=3, schema=schema, idle_timeout=None, timeout=TIMEOUT)
    try:
        cluster.register_agent("default", "cluster_agents:echo")
        seen: list[Event] = []
        done = threading.Event()
        sessions = [f"e{i}" for i in range(60)]

        def record(event: Event) -> None:
            seen.append(event)
            if sum(e.type == "run.completed" for e in seen) >= len(sessions):
                done.set()

        unsubscribe = cluster.events.subscribe(record, pattern="run.*")
        for f in [cluster.session(sid).run("hi") for sid in sessions]:
            f.get(timeout=TIMEOUT)
        assert done.wait(TIMEOUT)
        unsubscribe()
        completed = {e.session_id for e in seen if e.type == "run.completed"}
        assert completed == set(sessions)
        assert {cluster.host_of(s) for s in completed} == {"host-0", "host-1", "host-2"}
    finally:
        cluster.stop()


def test_submit_poll_and_a_runs_stream_cross_hosts(ray_cluster: Any, cluster_store: Any) -> None:
    """submit gives a run id that result and aresult answer; astream gives that run's events,
    from the host that ran it, ending with run.completed."""
    import asyncio

    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=3, schema=schema, idle_timeout=None)
    try:
        cluster.register_agent("default", "cluster_agents:echo")
        cluster.register_agent("durable", "cluster_agents:echo", durable=True)
        session = cluster.session("p1")
        run_id = session.submit("one")
        assert session.result(run_id, timeout=TIMEOUT).output == "echo: one"
        durable = cluster.session("p2", "durable")
        durable_id = durable.submit("two")

        async def main() -> tuple[str, list[str], str, str | None]:
            polled = (await durable.aresult(durable_id, timeout=TIMEOUT)).output
            stream = cluster.session("p3").astream("three")
            async with asyncio.timeout(TIMEOUT):
                types = [event.type async for event in stream]
            return polled, types, (await stream.result()).output, stream.run_id

        polled, types, streamed, stream_id = asyncio.run(main())
        assert polled == "echo: two"
        assert types == ["run.started", "model.requested", "model.responded", "run.completed"]
        assert streamed == "echo: three" and stream_id is not None
        with pytest.raises(PraxoError) as info:
            session.result("run_unknown", timeout=TIMEOUT)
        assert info.value.code == "RUNTIME_UNKNOWN_RUN"
    finally:
        cluster.stop()


def test_an_approval_resumes_on_the_cluster(ray_cluster: Any, cluster_store: Any) -> None:
    """Run, interrupted for approval, resume(True), completed: through the session's host."""
    import asyncio

    from praxo_actors.runtime import AgentSession

    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=2, schema=schema, idle_timeout=None)
    try:
        cluster.register_agent("mailer", "cluster_agents:approving")
        session = cluster.session("ops-1", agent="mailer")
        assert isinstance(session, AgentSession)
        stopped = session.run("mail ada").get(timeout=TIMEOUT)
        assert stopped.status == "interrupted" and stopped.interrupt is not None
        resumed = session.resume(True)
        assert resumed.run_id == stopped.run_id  # the interrupted run's, before its result
        done = resumed.get(timeout=TIMEOUT)
        assert done.status == "completed" and done.output == 'result: "sent to ada"'
        assert done.run_id == stopped.run_id == resumed.run_id
        with pytest.raises(AgentError) as info:
            session.resume(True).get(timeout=TIMEOUT)
        assert info.value.code == "SESSION_NOT_INTERRUPTED"
        with pytest.raises(PraxoError) as bad:
            session.resume({1, 2})
        assert bad.value.code == "RUNTIME_INVALID_INPUT"
        history = asyncio.run(asyncio.wait_for(session.ahistory(TIMEOUT), TIMEOUT))
        assert [m.content for m in history][-1] == 'result: "sent to ada"'
        again = session.run("mail ada again").get(timeout=TIMEOUT)
        assert again.status == "interrupted"
        finished = asyncio.run(asyncio.wait_for(session.aresume(True), TIMEOUT))
        assert finished.run_id == again.run_id and finished.status == "completed"
    finally:
        cluster.stop()
