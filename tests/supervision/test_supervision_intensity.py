"""Restart intensity on a manual clock; restarts that keep failing (OTP hanging_restart_loop)."""

from __future__ import annotations

import pytest
from _helpers import captured_logs
from _supervision_helpers import (
    TIMEOUT,
    DownWaiter,
    Starter,
    call,
    capture,
    crash,
    crash_child,
)

from supervisors import ChildCounts, ManualClock, Supervisor, SupervisorError


def test_third_crash_within_window_stops_supervisor(caplog: pytest.LogCaptureFixture) -> None:
    """With max_restarts=2, two crashes are restarted and the third stops the supervisor."""
    clock = ManualClock()
    child = Starter("child1")
    sup = Supervisor.start([child.spec()], max_restarts=2, max_seconds=5, clock=clock)
    sup_down = DownWaiter(sup)
    crash_child(sup, child.current)
    clock.advance(1)
    crash_child(sup, child.current)
    assert call(sup, "statistics").restarts == 2
    clock.advance(1)
    with captured_logs(caplog, "supervisors") as logs:
        crash_child(sup, child.current)
        down = sup_down.wait()
    assert down.reason == "crash"
    assert isinstance(down.exception, SupervisorError)
    assert down.exception.code == "SUPERVISOR_MAX_RESTARTS"
    assert len(child.refs) == 3
    assert not any(ref.is_alive() for ref in child.refs)
    [report] = capture(logs, "max_restart_intensity_reached")
    assert (report["child_id"], report["max_restarts"]) == ("child1", 2)


def test_crashes_spaced_beyond_the_window_never_add_up() -> None:
    """Crashes more than max_seconds apart are each the only one in the window."""
    clock = ManualClock()
    child = Starter("child1")
    sup = Supervisor.start([child.spec()], max_restarts=1, max_seconds=5, clock=clock)
    for _ in range(6):
        crash_child(sup, child.current)
        assert call(sup, "count_children") == ChildCounts(1, 1, 0, 1)
        clock.advance(5.5)
    assert sup.is_alive()
    assert call(sup, "statistics").restarts == 6


def test_restart_exactly_max_seconds_ago_still_counts() -> None:
    """As in OTP, a restart exactly max_seconds old is still inside the window."""
    clock = ManualClock()
    child = Starter("child1")
    sup = Supervisor.start([child.spec()], max_restarts=1, max_seconds=5, clock=clock)
    sup_down = DownWaiter(sup)
    crash_child(sup, child.current)
    clock.advance(5)
    crash_child(sup, child.current)
    assert sup_down.wait().reason == "crash"


def test_zero_max_restarts_escalates_on_first_crash() -> None:
    """max_restarts=0 lets no restart happen: the first crash stops the supervisor."""
    child = Starter("child1")
    sup = Supervisor.start([child.spec()], max_restarts=0)
    sup_down = DownWaiter(sup)
    crash(child.current)
    assert sup_down.wait().reason == "crash"
    assert len(child.refs) == 1


def test_escalation_stops_the_siblings() -> None:
    """When intensity is exceeded, the other children are stopped before the supervisor exits."""
    crashing, sibling = Starter("child1"), Starter("child2")
    sup = Supervisor.start([crashing.spec(), sibling.spec()], max_restarts=0)
    sup_down = DownWaiter(sup)
    sibling_down = DownWaiter(sibling.current)
    crash(crashing.current)
    assert sibling_down.wait().reason == "normal"
    assert sup_down.wait().reason == "crash"
    assert sibling.trace.events()[-1] == ("stop", "child2")


def test_failing_restart_is_retried_while_api_answers() -> None:
    """A restart whose start fails is retried behind queued calls, so the API keeps answering."""
    clock = ManualClock()
    child = Starter("child1")
    sup = Supervisor.start([child.spec()], max_restarts=1_000_000, clock=clock)
    child.fail = "raise"
    child.succeeded.clear()
    crash(child.current)
    [record] = call(sup, "which_children")
    assert (record.ref, record.restarting) == (None, True)
    assert call(sup, "count_children") == ChildCounts(1, 0, 0, 1)
    with pytest.raises(SupervisorError) as restarting:
        call(sup, "restart_child", "child1")
    assert restarting.value.code == "SUPERVISOR_CHILD_RESTARTING"
    with pytest.raises(SupervisorError) as deleting:
        call(sup, "delete_child", "child1")
    assert deleting.value.code == "SUPERVISOR_CHILD_RESTARTING"
    with pytest.raises(SupervisorError) as present:
        call(sup, "start_child", child.spec())
    assert present.value.code == "SUPERVISOR_CHILD_EXISTS"
    child.fail = None
    assert child.succeeded.wait(TIMEOUT)
    [record] = call(sup, "which_children")
    assert record.ref is child.current
    assert not record.restarting
    stats = call(sup, "statistics")
    assert stats.failed_restarts >= 1
    assert stats.restarts == stats.failed_restarts + 1


def test_terminate_child_cancels_a_failing_restart() -> None:
    """Terminating a child whose restart keeps failing stops the retries for good."""
    child = Starter("child1")
    sup = Supervisor.start([child.spec()], max_restarts=1_000_000, clock=ManualClock())
    child.fail = "raise"
    crash(child.current)
    call(sup, "terminate_child", "child1")
    attempts = child.attempts
    [record] = call(sup, "which_children")
    assert (record.ref, record.restarting) == (None, False)
    assert child.attempts == attempts  # no retry ran after the terminate
    child.fail = None
    ref = call(sup, "restart_child", "child1")
    assert ref is child.current


def test_failing_retries_count_toward_intensity() -> None:
    """Each failed restart attempt counts, so a child that never starts escalates."""
    child = Starter("child1")
    sup = Supervisor.start([child.spec()], max_restarts=3, clock=ManualClock())
    sup_down = DownWaiter(sup)
    child.fail = "on_start"
    crash(child.current)
    down = sup_down.wait()
    assert isinstance(down.exception, SupervisorError)
    assert child.attempts == 1 + 3  # the first start, then three failed restarts


def test_supervisor_stops_while_a_restart_keeps_failing() -> None:
    """A supervisor caught in a failing restart loop still takes and honours its stop."""
    child, sibling = Starter("child1"), Starter("child2")
    sup = Supervisor.start(
        [child.spec(), sibling.spec()], max_restarts=1_000_000, clock=ManualClock()
    )
    child.fail = "raise"
    crash(child.current)
    assert call(sup, "which_children")[0].restarting
    assert sup.stop(timeout=TIMEOUT) is True
    assert not sibling.current.is_alive()
