"""Overload: every limit refuses work with its code instead of growing without bound."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from _runtime_helpers import TIMEOUT, Gate, contents, error_code

from praxo_actors._errors import RuntimeLimitError, SessionBusyError, SessionOverloadedError
from praxo_actors.runtime import Runtime

Start = Callable[..., Runtime]


def test_max_queue_counts_runs_beyond_the_running_one(runtime: Start) -> None:
    """With ``max_queue=2`` a session holds one running and two queued runs; the next is refused."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent}, max_queue=2)
    handle = rt.session("s1")
    accepted = [handle.run("r0")]
    gate.entered(1)
    accepted += [handle.run("q1"), handle.run("q2")]
    refused = handle.run("q3")
    with pytest.raises(SessionOverloadedError) as info:
        refused.get(timeout=TIMEOUT)
    assert info.value.code == "SESSION_OVERLOADED"
    assert not any(f.done() for f in accepted)
    gate.release()
    assert [f.get(timeout=TIMEOUT).output for f in accepted] == ["r0!", "q1!", "q2!"]
    assert contents(handle.history())[::2] == ["r0", "q1", "q2"]
    # Once the queue drains, the session takes runs again.
    assert handle.run("later").get(timeout=TIMEOUT).output == "later!"


def test_max_queue_zero_allows_only_the_running_run(runtime: Start) -> None:
    """With ``max_queue=0`` a second run on a busy session is refused: SESSION_OVERLOADED."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent}, max_queue=0)
    handle = rt.session("s1")
    running = handle.run("a")
    gate.entered(1)
    assert error_code(handle.run("b")) == "SESSION_OVERLOADED"
    gate.release()
    assert running.get(timeout=TIMEOUT).output == "a!"
    assert handle.run("c").get(timeout=TIMEOUT).output == "c!"


def test_overload_is_per_session(runtime: Start) -> None:
    """A full queue on one session does not refuse runs on another."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent}, max_queue=0)
    busy = rt.session("a").run("x")
    gate.entered(1)
    assert error_code(rt.session("a").run("y")) == "SESSION_OVERLOADED"
    other = rt.session("b").run("z")
    gate.entered(2)
    gate.release()
    assert busy.get(timeout=TIMEOUT).output == "x!"
    assert other.get(timeout=TIMEOUT).output == "z!"


def test_reject_refuses_a_run_on_a_busy_session(runtime: Start) -> None:
    """With ``on_busy="reject"`` a run sent while another is pending fails with SESSION_BUSY."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent}, on_busy="reject")
    handle = rt.session("s1")
    running = handle.run("a")
    gate.entered(1)
    with pytest.raises(SessionBusyError) as info:
        handle.run("b").get(timeout=TIMEOUT)
    assert info.value.code == "SESSION_BUSY"
    gate.release()
    assert running.get(timeout=TIMEOUT).output == "a!"
    assert handle.run("c").get(timeout=TIMEOUT).output == "c!"
    assert contents(handle.history())[::2] == ["a", "c"]


def test_session_limit_refuses_new_sessions_when_none_is_idle(runtime: Start) -> None:
    """At ``max_live_sessions`` with all busy, a new session fails: RUNTIME_SESSION_LIMIT."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent}, max_live_sessions=1)
    busy = rt.session("a").run("x")
    gate.entered(1)
    with pytest.raises(RuntimeLimitError) as info:
        rt.session("b").run("y").get(timeout=TIMEOUT)
    assert info.value.code == "RUNTIME_SESSION_LIMIT"
    # The busy session itself still takes runs: the limit is on sessions, not runs.
    queued = rt.session("a").run("z")
    gate.release()
    assert busy.get(timeout=TIMEOUT).output == "x!"
    assert queued.get(timeout=TIMEOUT).output == "z!"
    assert rt.statistics().live_sessions == 1


def test_refused_runs_hold_nothing(runtime: Start) -> None:
    """Refused runs are never started and leave nothing pending in the runtime."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent}, max_queue=0)
    running = rt.session("s1").run("a")
    gate.entered(1)
    for _ in range(100):
        assert error_code(rt.session("s1").run("b")) == "SESSION_OVERLOADED"
    assert rt.statistics().runs_pending == 1
    gate.release()
    running.get(timeout=TIMEOUT)
    stats = rt.statistics()
    assert (stats.runs_started, stats.runs_completed, stats.runs_failed) == (1, 1, 0)
    assert stats.runs_pending == 0
