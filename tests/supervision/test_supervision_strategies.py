"""Restart strategies, after OTP's one_for_one, one_for_all, rest_for_one, temporary_bystander."""

from __future__ import annotations

from typing import Any

import pykka
import pytest
from _supervision_helpers import (
    Starter,
    Trace,
    call,
    crash,
    ids,
)

from supervisors import ChildCounts, Supervisor


def _tree(
    strategy: str, *names: str, **flags: Any
) -> tuple[pykka.ActorRef[Any], dict[str, Starter]]:
    trace = Trace()
    starters = {name: Starter(name, trace) for name in names}
    sup = Supervisor.start([s.spec() for s in starters.values()], strategy=strategy, **flags)
    return sup, starters


def test_one_for_one_restarts_only_the_crashed_child() -> None:
    """one_for_one: the crashed child is replaced and its sibling keeps running."""
    sup, kids = _tree("one_for_one", "child1", "child2")
    sibling = kids["child2"].current
    crash(kids["child1"].current)
    records = call(sup, "which_children")
    assert [r.ref for r in records] == [kids["child1"].refs[1], sibling]
    assert call(sup, "count_children") == ChildCounts(2, 2, 0, 2)


def test_one_for_all_restarts_every_child() -> None:
    """one_for_all: every child is stopped (in reverse order) and started again in order."""
    sup, kids = _tree("one_for_all", "child1", "child2", "child3")
    trace = kids["child1"].trace
    old = {name: s.current for name, s in kids.items()}
    crash(old["child2"])
    records = call(sup, "which_children")
    assert [r.ref for r in records] == [kids[n].refs[1] for n in ("child1", "child2", "child3")]
    assert not any(ref.is_alive() for ref in old.values())
    assert trace.of("stop") == ["child3", "child1"]  # child2 crashed; the others stopped
    assert trace.of("start")[3:] == ["child1", "child2", "child3"]
    assert call(sup, "statistics").restarts == 1


def test_rest_for_one_restarts_the_crashed_child_and_those_after_it() -> None:
    """rest_for_one: the children started after the crashed one are restarted with it."""
    sup, kids = _tree("rest_for_one", "child1", "child2", "child3")
    first = kids["child1"].current
    crash(kids["child2"].current)
    records = call(sup, "which_children")
    assert [r.ref for r in records] == [first, kids["child2"].refs[1], kids["child3"].refs[1]]
    assert kids["child1"].trace.of("start")[3:] == ["child2", "child3"]


@pytest.mark.parametrize("strategy", ["one_for_all", "rest_for_one"])
def test_temporary_bystander_is_not_restarted(strategy: str) -> None:
    """A temporary child stopped by a group restart is not started again (OTP bystander)."""
    trace = Trace()
    child1, child2 = Starter("child1", trace), Starter("child2", trace)
    sup = Supervisor.start(
        [child1.spec(), child2.spec(restart="temporary")], strategy=strategy, max_restarts=2
    )
    bystander = child2.current
    crash(child1.current)
    assert ids(sup) == ["child1"]
    assert not bystander.is_alive()
    assert len(child2.refs) == 1
    assert sup.is_alive()


def test_one_for_all_other_child_fails_restart() -> None:
    """A sibling failing to start in a group restart makes the retry stop and restart them all."""
    sup, kids = _tree("one_for_all", "child1", "child2", max_restarts=10)
    child1, child2 = kids["child1"], kids["child2"]
    child2.plan = ["raise"]  # its next start fails, the one after succeeds
    crash(child1.current)
    # Answered after the crash was handled and before the retry (told behind this call).
    during = call(sup, "which_children")
    assert during[0].ref is child1.refs[1]
    assert (during[1].ref, during[1].restarting) == (None, True)
    after = call(sup, "which_children")
    assert not child1.refs[1].is_alive()  # stopped again by the retried group restart
    assert [r.ref for r in after] == [child1.refs[2], child2.refs[1]]
    stats = call(sup, "statistics")
    assert (stats.restarts, stats.failed_restarts) == (2, 1)


def test_rest_for_one_other_child_fails_restart() -> None:
    """With rest_for_one, the retry restarts from the child that failed, not from the first."""
    sup, kids = _tree("rest_for_one", "child1", "child2", max_restarts=10)
    child1, child2 = kids["child1"], kids["child2"]
    child2.plan = ["raise"]
    crash(child1.current)
    call(sup, "which_children")  # the crash is handled; the retry is queued behind this
    after = call(sup, "which_children")
    assert [r.ref for r in after] == [child1.refs[1], child2.refs[1]]
    assert child1.refs[1].is_alive()
    assert len(child1.refs) == 2
