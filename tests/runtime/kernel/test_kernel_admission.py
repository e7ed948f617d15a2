"""The kernel admits runs without a thread: activation in batches, and each limit's code."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from _kernel_fakes import Rig, result

from praxo_actors import PraxoError
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._kernel._runs import REFUSED_KEPT
from praxo_actors.runtime._protocol import CancelRun, Restore, StartRun

Build = Callable[..., Rig]


def code(future: RunFuture) -> str:
    """Return the code a settled future fails with."""
    assert future.done()
    with pytest.raises(PraxoError) as info:
        future.get(timeout=0)
    return info.value.code


def test_new_sessions_of_one_turn_are_activated_as_one_batch(rig: Build) -> None:
    """Runs for three new sessions in one turn cost one store read and one start_children;
    each session gets its stored state first, then its runs in order."""
    r = rig()
    futures = [r.submit(sid) for sid in ("a", "b", "c", "a")]
    assert r.store.asked == [] and r.supervisor.batches == []  # sent at the end of the turn
    assert r.kernel.is_live("a") and r.statistics().runs_started == 4
    r.turn()
    assert len(r.store.asked) == 1 and len(r.supervisor.batches) == 1
    assert r.read() == ["a", "b", "c"]
    assert r.start() == ["a", "b", "c"]
    a = r.sessions["a"]
    assert a.kinds() == ["Restore", "StartRun", "StartRun"]
    assert [m.run_id for m in a.told[1:]] == [futures[0].run_id, futures[3].run_id]
    assert r.sessions["b"].kinds() == ["Restore", "StartRun"]
    assert r.statistics().activations == 3
    assert not any(f.done() for f in futures)


def test_a_run_for_a_live_session_is_sent_at_once(rig: Build) -> None:
    """A live session is told the run in the call that submits it (no turn, no store read)."""
    r = rig()
    r.submit("s")
    r.activate()
    asked = len(r.store.asked)
    future = r.submit("s", input="again")
    last = r.sessions["s"].told[-1]
    assert isinstance(last, StartRun) and (last.run_id, last.input) == (future.run_id, "again")
    assert len(r.store.asked) == asked


def test_reject_refuses_a_second_run_with_session_busy(rig: Build) -> None:
    """on_busy="reject": a run for a session with a run pending fails SESSION_BUSY at once."""
    r = rig(on_busy="reject")
    first = r.submit("s")
    second = r.submit("s")
    assert code(second) == "SESSION_BUSY" and not first.done()
    stats = r.statistics()
    assert (stats.runs_started, stats.runs_refused, stats.runs_pending) == (1, 1, 1)
    assert r.kernel.known(second.run_id) is second  # its refusal is still answered


def test_max_queue_refuses_with_session_overloaded(rig: Build) -> None:
    """Past ``max_queue`` runs waiting behind the running one, a run fails SESSION_OVERLOADED."""
    r = rig(max_queue=1)
    kept = [r.submit("s"), r.submit("s")]
    refused = r.submit("s")
    assert code(refused) == "SESSION_OVERLOADED"
    assert not any(f.done() for f in kept)
    r.activate()
    assert r.sessions["s"].kinds() == ["Restore", "StartRun", "StartRun"]


def test_the_session_limit_passivates_the_least_recently_used_idle_session(rig: Build) -> None:
    """At ``max_live_sessions``, a new session passivates the idlest one with no run; with
    none idle, the run fails RUNTIME_SESSION_LIMIT."""
    r = rig(max_live_sessions=2)
    for sid in ("a", "b"):
        future = r.submit(sid)
        r.activate()
        r.kernel.completed(future.run_id, result(future.run_id, sid))
        r.kernel.saved([(future.run_id, None)], [])
    r.submit("a")  # "a" is used again: "b" is now the least recently used, and idle
    r.submit("c")
    assert r.registry.unregistered == ["b"] and not r.sessions["b"].alive
    assert not r.kernel.is_live("b") and r.kernel.is_live("c")
    refused = r.submit("d")  # "a" and "c" both have a run pending
    assert code(refused) == "RUNTIME_SESSION_LIMIT"
    assert r.statistics().passivations == 1


def test_interrupt_cancels_what_runs_keeping_its_steps(rig: Build) -> None:
    """on_busy="interrupt": the newest input cancels the pending run at its next step, with
    ``keep``; "rollback" cancels it without."""
    for on_busy, keep in (("interrupt", True), ("rollback", False)):
        r = rig(on_busy=on_busy)
        first = r.submit("s")
        r.activate()
        second = r.submit("s")
        told = r.sessions["s"].told
        assert told[-2] == CancelRun(first.run_id, False, keep)
        assert isinstance(told[-1], StartRun) and told[-1].run_id == second.run_id


def test_a_stopping_kernel_refuses_every_run(rig: Build) -> None:
    """After ``begin_stop`` a run fails RUNTIME_STOPPED and activates nothing."""
    r = rig()
    r.kernel.begin_stop()
    assert code(r.submit("s")) == "RUNTIME_STOPPED"
    assert not r.kernel.is_live("s")
    r.turn()
    assert r.store.asked == [] and r.supervisor.batches == []


def test_restore_carries_the_version_a_stopped_session_reached(rig: Build) -> None:
    """A session activated again is told the log version its last actor stopped at, so that
    a stale checkpoint is refused."""
    r = rig()
    r.submit("s")
    r.activate()
    first = r.sessions["s"]
    assert first.told[0] == Restore(None, 0)
    future = r.submit("s")
    r.kernel.session_down("s", first, crashed=False, version=7)
    assert code(future) == "SESSION_CRASHED"
    r.submit("s")
    r.activate()
    assert r.sessions["s"] is not first and r.sessions["s"].told[0] == Restore(None, 7)


def test_refused_runs_are_remembered_a_bounded_while(rig: Build) -> None:
    """The kernel answers for the last REFUSED_KEPT refused runs, no more: a flood of refusals
    holds a bounded memory."""
    r = rig()
    r.kernel.begin_stop()
    futures = [r.submit("s") for _ in range(REFUSED_KEPT + 1)]
    assert r.kernel.known(futures[0].run_id) is None
    assert r.kernel.known(futures[-1].run_id) is futures[-1]
    assert r.statistics().runs_refused == REFUSED_KEPT + 1
