"""Sessions coming up and going down as the kernel sees them, without a thread: activation
failures and timeouts on a ManualClock, crashes, stops and passivation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from _kernel_fakes import FakeActor, Rig, result

from praxo_actors import PraxoError
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._protocol import CommitRun, StartRun, StopRuns
from supervisors import SupervisorError

Build = Callable[..., Rig]


def code(future: RunFuture) -> str:
    """Return the code a settled future fails with."""
    assert future.done()
    with pytest.raises(PraxoError) as info:
        future.get(timeout=0)
    return info.value.code


def down(r: Rig, session_id: str, crashed: bool) -> FakeActor:
    """Report the session's actor stopped (as the sessions supervisor does); return it."""
    actor = r.sessions[session_id]
    actor.alive = False
    r.kernel.session_down(session_id, actor, crashed)
    return actor


def test_a_crash_fails_the_sessions_runs_and_frees_its_place(rig: Build) -> None:
    """A crashed session's runs fail SESSION_CRASHED; the next run activates a new actor."""
    r = rig()
    futures = [r.submit("s"), r.submit("s")]
    r.activate()
    down(r, "s", crashed=True)
    assert [code(f) for f in futures] == ["SESSION_CRASHED"] * 2
    stats = r.statistics()
    assert (stats.crashes, stats.live_sessions, stats.runs_failed) == (1, 0, 2)
    r.submit("s")
    r.activate()
    assert r.sessions["s"].alive


def test_a_durable_run_goes_on_after_a_crash_three_times(rig: Build) -> None:
    """A durable agent's run is sent again to a new actor after each of three crashes; the
    fourth fails it."""
    r = rig(durable=("keeper",))
    future = r.submit("s", agent="keeper")
    r.activate()
    for _ in range(3):
        down(r, "s", crashed=True)
        assert not future.done()
        assert r.activate() == ["s"]
        assert r.sessions["s"].kinds() == ["Restore", "StartRun"]
        assert r.sessions["s"].told[1].run_id == future.run_id
    down(r, "s", crashed=True)
    assert code(future) == "SESSION_CRASHED"
    assert r.statistics().crashes == 4


def test_a_stop_by_the_user_cancels_the_runs(rig: Build) -> None:
    """``stop_session`` tells the session to end its runs, stops it, and its runs fail
    AGENT_CANCELLED when it is down."""
    r = rig()
    future = r.submit("s")
    r.activate()
    actor = r.sessions["s"]
    assert r.kernel.stop_session("s") is actor
    assert actor.told[-1] == StopRuns("AGENT_CANCELLED") and not actor.alive
    r.kernel.session_down("s", actor, crashed=False)
    assert code(future) == "AGENT_CANCELLED"
    assert r.statistics().crashes == 0


def test_stopping_tells_every_busy_session_and_fails_what_is_left(rig: Build) -> None:
    """``begin_stop`` tells each session with runs to end them RUNTIME_STOPPED (idle ones are
    not told); ``stop_all`` fails whatever is still pending, queued or activating."""
    r = rig()
    busy = r.submit("busy")
    idle = r.submit("idle")
    r.activate()
    r.kernel.failed(idle.run_id, PraxoError("AGENT_CANCELLED", "ended"))
    activating = r.submit("new")  # its activation never answered
    r.kernel.begin_stop()
    assert r.sessions["busy"].told[-1] == StopRuns("RUNTIME_STOPPED")
    assert not isinstance(r.sessions["idle"].told[-1], StopRuns)
    r.kernel.stop_all()
    assert [code(f) for f in (busy, activating)] == ["RUNTIME_STOPPED"] * 2
    assert r.statistics().runs_pending == 0


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (SupervisorError("SUPERVISOR_MAX_CHILDREN", "full"), "RUNTIME_SESSION_LIMIT"),
        (SupervisorError("SUPERVISOR_START_FAILED", "boom"), "SESSION_START_FAILED"),
    ],
)
def test_a_session_that_does_not_start_fails_its_runs(
    rig: Build, error: SupervisorError, expected: str
) -> None:
    """A session the supervisor could not start fails its runs with a runtime code; the
    other sessions of its batch start."""
    r = rig()
    failed, started = r.submit("a"), r.submit("b")
    r.turn()
    r.read()
    r.start(error)
    assert code(failed) == expected
    assert not started.done() and r.kernel.is_live("b") and not r.kernel.is_live("a")


def test_a_failed_store_read_fails_the_batch_and_stops_what_started(rig: Build) -> None:
    """A read of the batch's sessions that failed fails their runs STORE_FAILED, and the
    actors started for them are stopped."""
    r = rig()
    futures = [r.submit("a"), r.submit("b")]
    r.turn()
    r.start()
    r.fail_read(OSError("disk gone"))
    assert [code(f) for f in futures] == ["STORE_FAILED"] * 2
    assert not r.sessions["a"].alive and not r.sessions["b"].alive
    assert r.statistics().live_sessions == 0


def test_a_stuck_activation_times_out_on_the_runtimes_clock(rig: Build) -> None:
    """A store that never answers fails the batch RUNTIME_TIMEOUT once ``timeout`` seconds of
    the runtime's clock have passed, not before; the actor started for it is stopped."""
    r = rig(timeout=5.0)
    future = r.submit("s")
    r.turn()
    r.start()
    r.clock.advance(4.0)
    assert not future.done()
    r.clock.advance(1.5)
    assert code(future) == "RUNTIME_TIMEOUT"
    assert not r.sessions["s"].alive and not r.kernel.is_live("s")
    r.read()  # the store's late answer changes nothing
    assert r.sessions["s"].told == []


def test_a_store_that_keeps_answering_is_not_timed_out(rig: Build) -> None:
    """The timeout bounds a stuck answerer, not a backlog: a batch waiting behind answers
    that keep coming is not failed, however long the backlog takes."""
    r = rig(timeout=5.0)
    first = r.submit("a")
    r.turn()
    r.start()
    second = r.submit("b")
    r.turn()
    r.start()
    r.clock.advance(4.0)
    r.read()  # the first read is answered: the second waits 5 s from here
    r.clock.advance(4.0)
    assert not second.done()
    assert r.read() == ["b"]
    assert not first.done() and not second.done()
    r.clock.advance(60.0)
    assert r.statistics().live_sessions == 2


def test_a_checkpoint_that_does_not_restore_fails_the_sessions_runs(rig: Build) -> None:
    """A session whose stored state cannot be restored fails its runs with the state's code."""
    r = rig()
    future = r.submit("s")
    r.activate()
    error = PraxoError("CHECKPOINT_INVALID", "bad signature")
    r.kernel.restore_failed("s", r.sessions["s"], error)
    assert code(future) == "CHECKPOINT_INVALID"
    assert not r.kernel.is_live("s")


def test_idle_sessions_are_passivated_by_their_idle_time(rig: Build) -> None:
    """``passivate_idle`` stops the sessions idle that long on the runtime's clock, never one
    with a run pending."""
    r = rig()
    for sid in ("a", "b"):
        future = r.submit(sid)
        r.activate()
        r.kernel.failed(future.run_id, PraxoError("AGENT_CANCELLED", "ended"))
    busy = r.submit("c")
    r.activate()
    r.clock.advance(10.0)
    r.submit("b", input="used again")
    assert r.kernel.passivate_idle(5.0) == 1  # "a"; "b" has a run, "c" too
    assert r.registry.unregistered == ["a"] and not r.sessions["a"].alive
    assert r.kernel.passivate("c") is None and not busy.done()
    stats = r.statistics()
    assert (stats.passivations, stats.live_sessions) == (1, 2)


def test_waiters_hear_when_a_session_is_live_or_will_not_be(rig: Build) -> None:
    """``when_ready`` answers with the actor once the session is live, None if its activation
    failed, and at once for a session already live or not live at all."""
    r = rig(timeout=1.0)
    seen: list[Any] = []
    r.submit("a")
    r.submit("b")
    r.kernel.when_ready("a", seen.append)
    r.kernel.when_ready("b", seen.append)
    r.kernel.when_ready("none", seen.append)
    assert seen == [None]
    r.turn()
    r.read()
    r.start(None, SupervisorError("SUPERVISOR_START_FAILED", "boom"))
    assert seen == [None, r.sessions["a"], None]
    r.kernel.when_ready("a", seen.append)
    assert seen[-1] is r.sessions["a"]


def test_wake_activates_a_session_with_no_run(rig: Build) -> None:
    """``wake`` starts a session that has no run of its own (to resume its journal)."""
    r = rig(max_live_sessions=1)
    assert r.kernel.wake("s") is True
    r.activate()
    assert r.sessions["s"].kinds() == ["Restore"]
    assert r.kernel.wake("s") is True  # live already
    r.submit("s")
    assert r.kernel.wake("other") is False  # full, nothing idle to passivate
    assert not r.kernel.is_live("other")
    assert isinstance(r.sessions["s"].told[-1], StartRun)


def test_a_run_completed_before_a_crash_is_settled_by_the_store(rig: Build) -> None:
    """A run whose result reached the kernel before its session crashed is committed: the
    crash does not fail it, the store's write settles it."""
    r = rig()
    done, queued = r.submit("s"), r.submit("s")
    r.activate()
    r.kernel.completed(done.run_id, result(done.run_id))
    down(r, "s", crashed=True)
    assert code(queued) == "SESSION_CRASHED" and not done.done()
    r.kernel.saved([(done.run_id, None)], [])
    assert done.get(timeout=0).output == "ok"


def test_a_durable_run_ended_by_a_stop_is_taken_out_of_the_store(rig: Build) -> None:
    """A durable run a user's stop ended is committed as ended (its outcome kept, its inbox
    entry dropped), so that no later activation runs it."""
    r = rig(durable=("keeper",))
    future = r.submit("s", agent="keeper")
    r.activate()
    actor = r.sessions["s"]
    r.kernel.stop_session("s")
    r.kernel.session_down("s", actor, crashed=False)
    assert code(future) == "AGENT_CANCELLED"
    commits = [m.commit for m in r.store.told if isinstance(m, CommitRun)]
    assert [(c.session_id, c.inbox, c.ends) for c in commits] == [
        ("s", future.run_id, future.run_id)
    ]


def test_a_session_started_after_its_activation_timed_out_is_stopped_at_once(
    rig: Build,
) -> None:
    """A store that never answers times the batch out; the actor the supervisor reports
    started after that is stopped as soon as it is reported (the store still silent), told
    nothing, and not live."""
    r = rig(timeout=5.0)
    future = r.submit("s")
    r.turn()
    r.clock.advance(5.5)
    assert code(future) == "RUNTIME_TIMEOUT"
    assert r.start() == ["s"]  # the supervisor's late answer
    late = r.sessions["s"]
    assert not late.alive and late.told == []
    assert not r.kernel.is_live("s") and r.statistics().live_sessions == 0
    r.read()  # the store's late answer changes nothing
    assert late.told == [] and r.statistics().live_sessions == 0
    again = r.submit("s")  # the session activates again, on a new actor
    r.activate()
    assert r.sessions["s"] is not late and r.sessions["s"].alive
    assert not again.done() and isinstance(r.sessions["s"].told[-1], StartRun)
