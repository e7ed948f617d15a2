"""DynamicSupervisor: children started on demand, max_children, restarts, parallel stop."""

from __future__ import annotations

import threading
from typing import Any

import pykka
import pytest
from _helpers import captured_logs
from _supervision_helpers import (
    TIMEOUT,
    DownWaiter,
    Starter,
    Worker,
    call,
    capture,
    crash,
    crash_child,
    stop,
)

from praxo_actors.testing._eventually import eventually
from supervisors import ChildCounts, ChildSpec, DynamicSupervisor, ManualClock, SupervisorError


def test_start_and_terminate_children() -> None:
    """Children are listed in start order; terminate_child stops one and forgets it."""
    sup = DynamicSupervisor.start()
    spec = ChildSpec("worker", Worker.start)
    first, second = call(sup, "start_child", spec), call(sup, "start_child", spec)
    assert [r.ref for r in call(sup, "which_children")] == [first, second]
    assert call(sup, "count_children") == ChildCounts(2, 2, 0, 2)
    call(sup, "terminate_child", first)
    assert not first.is_alive()
    assert [r.ref for r in call(sup, "which_children")] == [second]
    with pytest.raises(SupervisorError) as missing:
        call(sup, "terminate_child", first)
    assert missing.value.code == "SUPERVISOR_CHILD_NOT_FOUND"


def test_terminate_child_refuses_a_stranger() -> None:
    """An actor that is not a child is not found, and is left running."""
    sup = DynamicSupervisor.start()
    stranger = Worker.start()
    with pytest.raises(SupervisorError) as missing:
        call(sup, "terminate_child", stranger)
    assert missing.value.code == "SUPERVISOR_CHILD_NOT_FOUND"
    assert stranger.is_alive()


def test_max_children() -> None:
    """Starting past max_children raises SUPERVISOR_MAX_CHILDREN; a free slot can be used again."""
    sup = DynamicSupervisor.start(max_children=2)
    spec = ChildSpec("worker", Worker.start)
    first = call(sup, "start_child", spec)
    call(sup, "start_child", spec)
    with pytest.raises(SupervisorError) as full:
        call(sup, "start_child", spec)
    assert full.value.code == "SUPERVISOR_MAX_CHILDREN"
    call(sup, "terminate_child", first)
    call(sup, "start_child", spec)
    assert call(sup, "count_children").active == 2


@pytest.mark.parametrize(
    ("restart", "how", "restarted"),
    [
        ("permanent", "crash", True),
        ("permanent", "normal", True),
        ("transient", "crash", True),
        ("transient", "normal", False),
        ("temporary", "crash", False),
        ("temporary", "normal", False),
    ],
)
def test_restart_types(restart: str, how: str, restarted: bool) -> None:
    """A dynamic child is restarted by its restart type; one that is not is forgotten."""
    sup = DynamicSupervisor.start()
    child = Starter("child")
    call(sup, "start_child", child.spec(restart=restart))
    if how == "crash":
        crash_child(sup, child.current)
    else:
        stop(child.current)
    records = call(sup, "which_children")
    assert [r.ref for r in records] == ([child.refs[1]] if restarted else [])


def test_restarted_child_is_found_by_its_new_ref() -> None:
    """After a restart, terminate_child takes the new ref and not the old one."""
    sup = DynamicSupervisor.start()
    child = Starter("child")
    old = call(sup, "start_child", child.spec())
    crash_child(sup, old)
    with pytest.raises(SupervisorError):
        call(sup, "terminate_child", old)
    call(sup, "terminate_child", child.current)
    assert call(sup, "which_children") == []


def test_escalation() -> None:
    """Past its intensity a dynamic supervisor stops every child and exits abnormally."""
    sup = DynamicSupervisor.start(max_restarts=1, clock=ManualClock())
    crashing, bystander = Starter("crashing"), Starter("bystander")
    call(sup, "start_child", crashing.spec())
    call(sup, "start_child", bystander.spec())
    sup_down = DownWaiter(sup)
    bystander_down = DownWaiter(bystander.current)
    crash_child(sup, crashing.current)
    crash(crashing.current)
    assert sup_down.wait().reason == "crash"
    assert bystander_down.wait().reason == "normal"


def test_failing_restart_is_retried() -> None:
    """A dynamic child whose restart fails is retried and shows as restarting meanwhile."""
    sup = DynamicSupervisor.start(max_restarts=1_000_000, clock=ManualClock())
    child = Starter("child")
    call(sup, "start_child", child.spec())
    child.fail = "raise"
    child.succeeded.clear()
    crash(child.current)
    [record] = call(sup, "which_children")
    assert (record.ref, record.restarting) == (None, True)
    child.fail = None
    assert child.succeeded.wait(TIMEOUT)
    assert call(sup, "which_children")[0].ref is child.current


def _block(ref: pykka.ActorRef[Any]) -> threading.Event:
    """Block a worker in a message handler; return the event that releases it."""
    entered, release = threading.Event(), threading.Event()
    ref.tell(("block", entered, release))
    assert entered.wait(TIMEOUT)
    return release


def test_children_are_all_asked_to_stop_at_once() -> None:
    """On stop, every stuck child has its stop request before any one's shutdown time is up:
    they stop in parallel, not one after another."""
    sup = DynamicSupervisor.start()
    spec = ChildSpec("stuck", Worker.start, shutdown=60.0)  # far beyond this test's waits
    refs = [call(sup, "start_child", spec) for _ in range(3)]
    releases = [_block(ref) for ref in refs]
    stopper = threading.Thread(target=stop, args=(sup,))
    stopper.start()
    try:
        # A stuck child's stop request waits in its inbox: all three there, while the first
        # one's 60 s are still running, is a parallel stop.
        eventually(
            lambda: all(ref.actor_inbox.qsize() for ref in refs),
            what="the children all asked to stop",
        )
    finally:
        for release in releases:
            release.set()
    stopper.join(TIMEOUT)
    assert not stopper.is_alive()
    assert all(ref.actor_stopped.is_set() for ref in refs)


def test_stuck_children_are_all_abandoned(caplog: pytest.LogCaptureFixture) -> None:
    """Children that stay stuck past their shutdown time are each abandoned and reported."""
    sup = DynamicSupervisor.start()
    spec = ChildSpec("stuck", Worker.start, shutdown=0.2)
    releases = [_block(call(sup, "start_child", spec)) for _ in range(3)]
    try:
        with captured_logs(caplog, "supervisors") as logs:
            stop(sup)
        assert len(capture(logs, "child_abandoned")) == 3
    finally:
        for release in releases:
            release.set()


def test_many_temporary_children() -> None:
    """Two hundred temporary children start, end on their own and leave nothing behind."""
    sup = DynamicSupervisor.start()
    spec = ChildSpec("worker", Worker.start, restart="temporary")
    refs: list[pykka.ActorRef[Any]] = [call(sup, "start_child", spec) for _ in range(200)]
    assert call(sup, "count_children").active == 200
    for ref in refs:
        ref.stop(block=False)
    for ref in refs:
        DownWaiter(ref).wait()
    assert call(sup, "count_children") == ChildCounts(0, 0, 0, 0)


def test_invalid_arguments() -> None:
    """Bad max_children and significant children are rejected with SUPERVISOR_INVALID_SPEC."""
    with pytest.raises(SupervisorError) as bad:
        DynamicSupervisor.start(max_children=-1)
    assert bad.value.code == "SUPERVISOR_INVALID_SPEC"
    sup = DynamicSupervisor.start()
    spec = ChildSpec("w", Worker.start, restart="temporary", significant=True)
    with pytest.raises(SupervisorError) as significant:
        call(sup, "start_child", spec)
    assert significant.value.code == "SUPERVISOR_INVALID_SPEC"


def test_start_children_starts_a_burst_and_reports_each_outcome() -> None:
    """start_children returns one outcome per spec: a ref, or the error start_child would raise."""
    sup = DynamicSupervisor.start(max_children=4)
    failing = Starter("bad")
    failing.fail = "on_start"
    specs = [
        ChildSpec("a", Worker.start),
        ChildSpec("b", failing),
        ChildSpec("c", Worker.start),
        ChildSpec("d", Worker.start),
        ChildSpec("e", Worker.start),
        ChildSpec("f", Worker.start),
    ]
    reported: list[list[Any]] = []
    outcomes = call(sup, "start_children", specs, reported.append)
    assert reported == [outcomes]
    kinds = [
        "ref" if isinstance(o, pykka.ActorRef) else getattr(o, "code", type(o).__name__)
        for o in outcomes
    ]
    # b fails on start; e is refused by max_children (a, c, d and the failing b counted), f too.
    assert kinds[0] == "ref" and kinds[2] == "ref" and kinds[3] == "ref"
    assert kinds[1] == "SUPERVISOR_START_FAILED"
    assert set(kinds[4:]) == {"SUPERVISOR_MAX_CHILDREN"}
    started = [o for o in outcomes if isinstance(o, pykka.ActorRef)]
    assert all(ref.is_alive() for ref in started)
    assert [r.ref for r in call(sup, "which_children")] == started
    stop(sup)
    assert not any(ref.is_alive() for ref in started)
