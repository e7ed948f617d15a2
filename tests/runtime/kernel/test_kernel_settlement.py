"""The kernel settles each run once, without a thread: a completed run when the store has
written it, a failed one at once, a cancelled one where it is."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from _kernel_fakes import Rig, result

from praxo_actors import PraxoError
from praxo_actors.agent import AgentError
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._protocol import CancelRun, Journaled

Build = Callable[..., Rig]


def code(future: RunFuture) -> str:
    """Return the code a settled future fails with."""
    assert future.done()
    with pytest.raises(PraxoError) as info:
        future.get(timeout=0)
    return info.value.code


def live_run(r: Rig, session_id: str = "s") -> RunFuture:
    """Submit a run and activate its session."""
    future = r.submit(session_id)
    r.activate()
    return future


def test_a_completed_run_settles_when_the_store_has_written_it(rig: Build) -> None:
    """A session's result is held until the store's write acknowledges it."""
    r = rig()
    future = live_run(r)
    done = result(future.run_id, output="done")
    r.kernel.completed(future.run_id, done)
    assert not future.done() and r.statistics().runs_pending == 1
    assert r.kernel.cancel(future.run_id) is False  # its outcome is being stored
    r.kernel.saved([(future.run_id, None)], [])
    assert future.get(timeout=0) is done
    stats = r.statistics()
    assert (stats.runs_completed, stats.runs_failed, stats.runs_pending) == (1, 0, 0)


def test_a_write_acknowledged_before_the_result_arrives_settles_on_arrival(rig: Build) -> None:
    """A store on another thread may acknowledge the commit before the session's result
    reaches the loop: the result then settles the run as it arrives."""
    r = rig()
    future = live_run(r)
    r.kernel.saved([(future.run_id, None)], [])
    assert not future.done()
    r.kernel.completed(future.run_id, result(future.run_id))
    assert future.get(timeout=0).output == "ok"
    assert r.statistics().runs_completed == 1


def test_a_refused_commit_fails_the_run_with_its_code_and_reloads_the_session(
    rig: Build,
) -> None:
    """A commit the store refused (SESSION_CONFLICT) fails the run and the session's later
    runs with that code: the session's actor is stopped, to restore from the store."""
    r = rig()
    first = live_run(r)
    later = r.submit("s")
    actor = r.sessions["s"]
    r.kernel.completed(first.run_id, result(first.run_id))
    r.kernel.saved([(first.run_id, "SESSION_CONFLICT")], [])
    assert code(first) == "SESSION_CONFLICT"
    assert not actor.alive and not later.done()
    r.kernel.session_down("s", actor, crashed=False)
    assert code(later) == "SESSION_CONFLICT"


def test_a_run_is_settled_once(rig: Build) -> None:
    """A run failed, then reported again (failed, completed, saved), keeps its first outcome
    and is counted once."""
    r = rig()
    future = live_run(r)
    r.kernel.failed(future.run_id, AgentError("AGENT_CANCELLED", "cancelled", future.run_id))
    r.kernel.failed(future.run_id, AgentError("SESSION_CRASHED", "again", future.run_id))
    r.kernel.completed(future.run_id, result(future.run_id))
    r.kernel.saved([(future.run_id, None)], [])
    assert code(future) == "AGENT_CANCELLED"
    stats = r.statistics()
    assert (stats.runs_completed, stats.runs_failed, stats.runs_pending) == (0, 1, 0)


def test_a_run_waiting_for_its_session_is_cancelled_where_it_waits(rig: Build) -> None:
    """A run queued behind an activation is dropped from the backlog and fails
    AGENT_CANCELLED; its session never hears of it."""
    r = rig()
    kept, cancelled = r.submit("s"), r.submit("s")
    assert cancelled.cancel() is True
    assert code(cancelled) == "AGENT_CANCELLED"
    r.activate()
    assert [m.run_id for m in r.sessions["s"].told[1:]] == [kept.run_id]
    assert cancelled.cancel() is False  # settled


def test_a_running_run_is_told_to_stop(rig: Build) -> None:
    """A run on a live session is told CancelRun (hard if asked); it ends when the session
    reports it."""
    r = rig()
    future = live_run(r)
    assert r.kernel.cancel(future.run_id, hard=True) is True
    assert r.sessions["s"].told[-1] == CancelRun(future.run_id, True)
    assert not future.done()
    r.kernel.failed(future.run_id, AgentError("AGENT_CANCELLED", "cancelled", future.run_id))
    assert code(future) == "AGENT_CANCELLED"
    assert r.kernel.cancel(future.run_id) is False


def test_a_session_gone_before_it_is_told_fails_the_run(rig: Build) -> None:
    """A session that died between routing and sending fails the run SESSION_CRASHED."""
    r = rig()
    live_run(r)
    r.sessions["s"].alive = False  # dead, its down not reported yet
    future = r.submit("s")
    assert code(future) == "SESSION_CRASHED"


def test_journal_acknowledgements_reach_the_caller_and_the_session(rig: Build) -> None:
    """A durable run's journal write calls back whoever waits for it, and tells its session."""
    r = rig(durable=("keeper",))
    future = r.submit("s", agent="keeper")
    r.activate()
    acked: list[str] = []
    r.kernel.expect_journal(future.run_id, lambda: acked.append(future.run_id))
    r.kernel.saved([], [("s", future.run_id, 2)])
    assert acked == [future.run_id]
    assert r.sessions["s"].told[-1] == Journaled(future.run_id, 2)
    r.kernel.saved([], [("s", future.run_id, 3)])
    assert acked == [future.run_id]  # once


def test_a_run_the_store_did_not_accept_fails_with_the_stores_code(rig: Build) -> None:
    """A submitted durable run the store failed to accept into the inbox fails with that code,
    and its session is told to cancel it at once."""
    r = rig(durable=("keeper",))
    future = r.submit("s", agent="keeper")
    r.activate()
    answers: list[str] = []
    r.kernel.expect_journal(future.run_id, lambda: answers.append("stored"))
    r.kernel.saved([], [], [(future.run_id, "STORE_FAILED")])
    assert code(future) == "STORE_FAILED"
    assert r.sessions["s"].told[-1] == CancelRun(future.run_id, True)
    assert answers == ["stored"]  # the caller is released; its future says how it ended
