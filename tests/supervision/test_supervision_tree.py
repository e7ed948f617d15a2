"""Supervision trees: escalation to the parent, and OTP's tree case."""

from __future__ import annotations

from typing import Any

import pykka
import pytest
from _helpers import captured_logs
from _supervision_helpers import (
    DownWaiter,
    Starter,
    call,
    capture,
    crash_child,
    ids,
)

from supervisors import ChildCounts, ChildSpec, ManualClock, Supervisor


class SubTree:
    """A child spec that starts a nested supervisor and keeps each instance's ref."""

    def __init__(self, name: str, children: list[Starter], **flags: Any) -> None:
        self.name = name
        self.children = children
        self.flags = flags
        self.refs: list[pykka.ActorRef[Any]] = []

    def __call__(self) -> pykka.ActorRef[Any]:
        ref = Supervisor.start([c.spec() for c in self.children], name=self.name, **self.flags)
        self.refs.append(ref)
        return ref

    def spec(self) -> ChildSpec:
        return ChildSpec(self.name, self, type="supervisor", shutdown=5.0)


def test_escalation_restarts_the_subtree(caplog: pytest.LogCaptureFixture) -> None:
    """A nested supervisor past its intensity exits abnormally and its parent restarts it."""
    worker = Starter("worker")
    sub = SubTree("sub", [worker], max_restarts=1, clock=ManualClock())
    root = Supervisor.start([sub.spec()], name="root")
    first_sub = sub.refs[0]
    sub_down = DownWaiter(first_sub)
    with captured_logs(caplog, "supervisors") as logs:
        crash_child(first_sub, worker.current)
        crash_child(first_sub, worker.current)
        down = sub_down.wait()
        records = call(root, "which_children")
    assert down.reason == "crash"
    assert [(r.id, r.type) for r in records] == [("sub", "supervisor")]
    assert records[0].ref is sub.refs[1]
    assert len(worker.refs) == 3  # the first, its one restart, and the new subtree's
    assert worker.current.ask("ping", timeout=5) == "pong"
    assert call(root, "statistics").restarts == 1
    [report] = capture(logs, "max_restart_intensity_reached")
    assert report["supervisor"] == "sub"
    crashed = [e["child_id"] for e in capture(logs, "child_crashed") if e["supervisor"] == "root"]
    assert crashed == ["sub"]


def test_escalation_reaches_the_root() -> None:
    """Escalation goes up level by level until a supervisor can absorb it, or the root exits."""
    worker = Starter("worker")
    sub = SubTree("sub", [worker], max_restarts=0)
    root = Supervisor.start([sub.spec()], max_restarts=0, name="root")
    root_down = DownWaiter(root)
    crash_child(sub.refs[0], worker.current)
    assert root_down.wait().reason == "crash"
    assert not any(ref.is_alive() for ref in sub.refs)
    assert not any(ref.is_alive() for ref in worker.refs)


def test_tree() -> None:
    """Only the crashed worker restarts; a subtree restart brings back its static children only."""
    child1, child2 = Starter("child1"), Starter("child2")
    sup1 = SubTree("supchild1", [child1, child2], max_restarts=4)
    sup2 = SubTree("supchild2", [], max_restarts=4, clock=ManualClock())
    top = Supervisor.start([sup1.spec(), sup2.spec()], strategy="one_for_all", max_restarts=4)
    assert call(top, "count_children") == ChildCounts(2, 2, 2, 0)
    assert call(sup1.refs[0], "count_children") == ChildCounts(2, 2, 0, 2)
    child3, child4 = Starter("child3"), Starter("child4")
    call(sup2.refs[0], "start_child", child3.spec())
    call(sup2.refs[0], "start_child", child4.spec())
    assert call(sup2.refs[0], "count_children") == ChildCounts(2, 2, 0, 2)

    crash_child(sup2.refs[0], child4.current)
    assert [r.ref for r in call(sup2.refs[0], "which_children")] == [child3.current, child4.refs[1]]
    assert len(child1.refs) == 1

    # child3 fails to restart every time: supchild2 escalates and top restarts both subtrees.
    child3.fail = "raise"
    sup2_down = DownWaiter(sup2.refs[0])
    crash_child(sup2.refs[0], child3.current)
    assert sup2_down.wait().reason == "crash"
    call(top, "count_children")  # the escalation has been handled
    assert [r.ref for r in call(top, "which_children")] == [sup1.refs[1], sup2.refs[1]]
    assert ids(sup1.refs[1]) == ["child1", "child2"]
    assert len(child1.refs) == 2
    assert ids(sup2.refs[1]) == []  # children added at run time are not part of the spec
