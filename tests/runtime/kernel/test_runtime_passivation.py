"""Passivation: idle sessions leave memory, reactivate transparently, and never lose a run.

Idle timeouts run on a :class:`ManualClock`: ``advance`` returns once the runtime has
passivated what went idle for long enough.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from _runtime_helpers import TIMEOUT, Gate, advance_until, contents, echo_agent, error_code

from praxo_actors.runtime import RunFuture, Runtime
from praxo_actors.testing import ManualClock

Start = Callable[..., Runtime]


def test_idle_session_is_passivated_and_reactivated(runtime: Start) -> None:
    """A session idle past the timeout stops, and its next run restores its history."""
    clock = ManualClock()
    rt = runtime(agents={"default": echo_agent}, idle_timeout=60, clock=clock)
    handle = rt.session("s1")
    handle.run("a").get(timeout=TIMEOUT)
    clock.advance(59.9)
    assert handle.live and rt.statistics().passivations == 0
    clock.advance(0.1)
    assert not handle.live
    assert rt.statistics().passivations == 1
    assert rt.statistics().live_sessions == 0
    result = handle.run("b").get(timeout=TIMEOUT)
    assert len(result.session.messages) == 4
    assert rt.statistics().activations == 2


def test_busy_session_is_not_passivated_by_the_idle_timeout(runtime: Start) -> None:
    """A session whose run waits on its model stays live however long the wait."""
    gate = Gate()
    clock = ManualClock()
    rt = runtime(agents={"default": gate.agent, "echo": echo_agent}, idle_timeout=60, clock=clock)
    handle = rt.session("s1")
    future = handle.run("slow")
    gate.entered(1)
    # A session that went idle at the same time is passivated: the janitor has had its chance.
    idle = rt.session("idle", agent="echo")
    idle.run("done").get(timeout=TIMEOUT)
    clock.advance(3600)
    assert not idle.live
    assert handle.live
    gate.release()
    assert future.get(timeout=TIMEOUT).output == "slow!"
    clock.advance(60)
    assert not handle.live


def test_passivate_refuses_a_busy_session(runtime: Start) -> None:
    """``passivate()`` returns False while a run is pending and True once the session is idle."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent})
    handle = rt.session("s1")
    future = handle.run("x")
    gate.entered(1)
    assert handle.passivate() is False
    assert handle.live
    gate.release()
    future.get(timeout=TIMEOUT)
    assert handle.passivate() is True
    assert not handle.live
    assert handle.passivate() is False


def test_history_of_a_passivated_session_comes_from_its_checkpoint(runtime: Start) -> None:
    """Reading a passivated session's history does not reactivate it."""
    rt = runtime(agents={"default": echo_agent})
    handle = rt.session("s1")
    handle.run("a").get(timeout=TIMEOUT)
    handle.run("b").get(timeout=TIMEOUT)
    assert handle.passivate()
    assert contents(handle.history()) == ["a", "a", "b", "b"]
    assert not handle.live
    assert rt.statistics().activations == 1
    assert rt.session("never-ran").history() == []


def test_least_recently_used_idle_session_is_passivated_at_the_cap(runtime: Start) -> None:
    """Past ``max_live_sessions`` the least recently used idle session makes room."""
    rt = runtime(agents={"default": echo_agent}, max_live_sessions=2)
    a, b, c = rt.session("a"), rt.session("b"), rt.session("c")
    a.run("1").get(timeout=TIMEOUT)
    b.run("1").get(timeout=TIMEOUT)
    a.run("2").get(timeout=TIMEOUT)  # b is now the least recently used
    c.run("1").get(timeout=TIMEOUT)
    assert (a.live, b.live, c.live) == (True, False, True)
    b.run("2").get(timeout=TIMEOUT)
    assert (a.live, b.live, c.live) == (False, True, True)
    assert contents(b.history()) == ["1", "1", "2", "2"]
    assert contents(a.history()) == ["1", "1", "2", "2"]
    assert rt.statistics().passivations == 2
    assert rt.statistics().live_sessions == 2


def test_session_limit_when_no_session_is_idle(runtime: Start) -> None:
    """At the cap with every session busy, a new session's run fails: RUNTIME_SESSION_LIMIT."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent}, max_live_sessions=2)
    busy = [rt.session(name).run("x") for name in ("a", "b")]
    gate.entered(2)
    assert error_code(rt.session("c").run("x")) == "RUNTIME_SESSION_LIMIT"
    gate.release()
    assert [f.get(timeout=TIMEOUT).output for f in busy] == ["x!", "x!"]
    assert rt.session("c").run("y").get(timeout=TIMEOUT).output == "y!"


def test_runs_racing_passivation_are_never_lost(runtime: Start) -> None:
    """Runs sent while the session is being passivated all complete, in order, on full history."""
    rt = runtime(agents={"default": echo_agent})
    handle = rt.session("s1")
    futures = []
    passivated = 0
    for i in range(40):
        go = threading.Barrier(2, timeout=TIMEOUT)
        result: list[bool] = []

        def passivate(go: threading.Barrier = go, result: list[bool] = result) -> None:
            go.wait()
            result.append(handle.passivate())

        thread = threading.Thread(target=passivate)
        thread.start()
        go.wait()
        futures.append(handle.run(f"m{i}"))
        thread.join(TIMEOUT)
        assert not thread.is_alive()
        passivated += result[0]
        futures[-1].get(timeout=TIMEOUT)
    assert [f.get(timeout=TIMEOUT).output for f in futures] == [f"m{i}" for i in range(40)]
    history = handle.history()
    assert contents(history)[::2] == [f"m{i}" for i in range(40)]
    assert rt.statistics().passivations == passivated


def test_runs_racing_the_idle_timeout_are_never_lost(runtime: Start) -> None:
    """Runs sent from several threads, each moving the clock past the idle timeout as it goes,
    all complete on full history."""
    clock = ManualClock()
    # The activation timeout is on the clock too, and the threads move it ~100 s in all while
    # the others' sessions reactivate: only the janitor is under test here.
    rt = runtime(agents={"default": echo_agent}, idle_timeout=1, clock=clock, timeout=3600)
    sessions = [rt.session(f"s{i}") for i in range(4)]
    futures: dict[str, list[RunFuture]] = {s.id: [] for s in sessions}

    def send(index: int) -> None:
        handle = sessions[index]
        for n in range(25):
            futures[handle.id].append(handle.run(f"{n}"))
            clock.advance(0.5)  # the janitor passivates whatever has gone idle meanwhile
            if n % 5 == 4:  # now and then, wait for the janitor to passivate this session
                futures[handle.id][-1].get(timeout=TIMEOUT)
                advance_until(rt, clock, lambda: not handle.live, 1)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT * 2)
        assert not thread.is_alive()
    for handle in sessions:
        assert [f.get(timeout=TIMEOUT).output for f in futures[handle.id]] == [
            f"{n}" for n in range(25)
        ]
        assert len(handle.history()) == 50
    assert rt.statistics().passivations >= 20
    stats = rt.statistics()
    assert stats.activations >= stats.passivations


def test_stopped_session_cancels_its_pending_runs(runtime: Start) -> None:
    """``handle.stop()`` fails the session's pending runs with AGENT_CANCELLED and keeps history."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent})
    handle = rt.session("s1")
    gate.release()
    handle.run("kept").get(timeout=TIMEOUT)
    gate.close()
    pending = [handle.run("a"), handle.run("b")]
    gate.entered(2)
    assert handle.stop() is True
    assert not handle.live
    assert [error_code(f) for f in pending] == ["AGENT_CANCELLED"] * 2
    gate.release()
    assert contents(handle.history()) == ["kept", "kept!"]
    assert handle.stop() is False
