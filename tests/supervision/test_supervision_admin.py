"""The admin API and its error codes, after OTP's child_adm and count_children cases."""

from __future__ import annotations

from typing import Any

import pykka
import pytest
from _supervision_helpers import Starter, call, crash, stop

from supervisors import ChildCounts, ChildRecord, ChildSpec, Supervisor, SupervisorError


def _error(sup: pykka.ActorRef[Any], method: str, *args: Any) -> str:
    with pytest.raises(SupervisorError) as failed:
        call(sup, method, *args)
    return failed.value.code


def test_child_adm() -> None:
    """start, terminate, restart and delete a child, with OTP's error for each wrong move."""
    child = Starter("child1")
    sup = Supervisor.start([child.spec()])
    first = child.current
    assert call(sup, "which_children") == [ChildRecord("child1", first, "permanent", "worker")]
    assert call(sup, "count_children") == ChildCounts(1, 1, 0, 1)

    assert _error(sup, "start_child", child.spec()) == "SUPERVISOR_CHILD_EXISTS"  # already started
    assert _error(sup, "terminate_child", "hej") == "SUPERVISOR_CHILD_NOT_FOUND"
    assert _error(sup, "delete_child", "hej") == "SUPERVISOR_CHILD_NOT_FOUND"
    assert _error(sup, "restart_child", "hej") == "SUPERVISOR_CHILD_NOT_FOUND"
    assert _error(sup, "delete_child", "child1") == "SUPERVISOR_CHILD_RUNNING"
    assert _error(sup, "restart_child", "child1") == "SUPERVISOR_CHILD_RUNNING"

    call(sup, "terminate_child", "child1")
    assert not first.is_alive()
    assert call(sup, "which_children") == [ChildRecord("child1", None, "permanent", "worker")]
    assert call(sup, "count_children") == ChildCounts(1, 0, 0, 1)
    call(sup, "terminate_child", "child1")  # terminating a stopped child succeeds
    assert _error(sup, "start_child", child.spec()) == "SUPERVISOR_CHILD_EXISTS"  # already present

    second = call(sup, "restart_child", "child1")
    assert second is child.current and second is not first
    assert call(sup, "count_children") == ChildCounts(1, 1, 0, 1)

    call(sup, "terminate_child", "child1")
    call(sup, "delete_child", "child1")
    assert _error(sup, "restart_child", "child1") == "SUPERVISOR_CHILD_NOT_FOUND"
    assert call(sup, "which_children") == []
    assert call(sup, "count_children") == ChildCounts(0, 0, 0, 0)

    third = call(sup, "start_child", child.spec())
    assert call(sup, "which_children") == [ChildRecord("child1", third, "permanent", "worker")]


def test_start_child_failure_keeps_no_spec() -> None:
    """A child added with start_child that fails to start is not kept."""
    sup = Supervisor.start([])
    child = Starter("child1")
    child.fail = "on_start"
    assert _error(sup, "start_child", child.spec()) == "SUPERVISOR_START_FAILED"
    assert call(sup, "which_children") == []
    assert _error(sup, "start_child", "not a spec") == "SUPERVISOR_INVALID_SPEC"


def test_restart_child_failure_keeps_the_spec() -> None:
    """restart_child whose start fails reports it and keeps the stopped child."""
    child = Starter("child1")
    sup = Supervisor.start([child.spec()])
    call(sup, "terminate_child", "child1")
    child.fail = "raise"
    assert _error(sup, "restart_child", "child1") == "SUPERVISOR_START_FAILED"
    assert call(sup, "which_children") == [ChildRecord("child1", None, "permanent", "worker")]


def test_terminate_temporary_child_forgets_it() -> None:
    """A terminated temporary child's spec is deleted, as when it ends on its own."""
    child = Starter("child1")
    sup = Supervisor.start([child.spec(restart="temporary")])
    call(sup, "terminate_child", "child1")
    assert call(sup, "which_children") == []


def test_count_children_separates_supervisors_and_workers() -> None:
    """count_children counts specs, running children, supervisors and workers apart."""
    worker = Starter("worker")
    stopped = Starter("stopped")
    nested = ChildSpec("nested", lambda: Supervisor.start([]), type="supervisor")
    sup = Supervisor.start([worker.spec(), nested, stopped.spec(restart="transient")])
    stop(stopped.current)
    assert call(sup, "count_children") == ChildCounts(specs=3, active=2, supervisors=1, workers=2)


def test_statistics_count_restarts_and_active_children() -> None:
    """statistics() reports restarts and active children as they change."""
    child = Starter("child1")
    sup = Supervisor.start([child.spec()])
    before = call(sup, "statistics")
    assert (before.restarts, before.active, before.specs, before.abandoned) == (0, 1, 1, 0)
    crash(child.current)
    after = call(sup, "statistics")
    assert (after.restarts, after.active) == (1, 1)


def test_calls_to_a_stopped_supervisor_fail_with_actor_dead() -> None:
    """A stopped supervisor answers nothing: Pykka raises ActorDeadError to the caller."""
    sup = Supervisor.start([])
    stop(sup)
    with pytest.raises(pykka.ActorDeadError):
        sup.proxy()
