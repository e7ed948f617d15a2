"""Restart types x {normal stop, crash}: OTP's permanent/transient/temporary_(ab)normal."""

from __future__ import annotations

from typing import Any

import pykka
import pytest
from _supervision_helpers import (
    TIMEOUT,
    AskCrashWorker,
    SharedLoopActor,
    Starter,
    Trace,
    call,
    crash,
    crash_child,
    stop,
)

from supervisors import ChildCounts, ChildSpec, Supervisor

# (restart type, how the child ends, restarted?, spec kept?)
MATRIX = [
    ("permanent", "normal", True, True),
    ("permanent", "crash", True, True),
    ("transient", "normal", False, True),
    ("transient", "crash", True, True),
    ("temporary", "normal", False, False),
    ("temporary", "crash", False, False),
]


@pytest.mark.parametrize(("restart", "how", "restarted", "kept"), MATRIX)
def test_restart_type_matrix(restart: str, how: str, restarted: bool, kept: bool) -> None:
    """A child is restarted, kept stopped or forgotten as its restart type and exit dictate."""
    child = Starter("child1")
    sup = Supervisor.start([child.spec(restart=restart)], max_restarts=2)
    first = child.current
    if how == "normal":
        stop(first)
    else:
        crash(first)
    records = call(sup, "which_children")
    if not kept:
        assert records == []
        assert call(sup, "count_children") == ChildCounts(0, 0, 0, 0)
    elif restarted:
        assert [r.id for r in records] == ["child1"]
        assert records[0].ref is child.current
        assert child.current is not first
        assert child.current.ask("ping", timeout=TIMEOUT) == "pong"
        assert call(sup, "count_children") == ChildCounts(1, 1, 0, 1)
    else:
        assert [(r.id, r.ref) for r in records] == [("child1", None)]
        assert call(sup, "count_children") == ChildCounts(1, 0, 0, 1)
    assert len(child.refs) == (2 if restarted else 1)
    assert call(sup, "statistics").restarts == (1 if restarted else 0)


def test_replacement_starts_after_the_old_on_failure() -> None:
    """The crashed instance's on_failure finishes before its replacement starts."""
    trace = Trace()
    child = Starter("child1", trace)
    sup = Supervisor.start([child.spec()])
    crash_child(sup, child.current)
    assert trace.events() == [("start", "child1"), ("failure", "child1"), ("start", "child1")]


def test_ask_crash_opt_in_restarts_child() -> None:
    """With CrashOnAskError, an ask exception reaches the caller and the child is restarted."""
    child = Starter("child1", actor=AskCrashWorker)
    sup = Supervisor.start([child.spec()])
    first = child.current
    with pytest.raises(ValueError, match="refused"):
        first.proxy().fail().get(timeout=TIMEOUT)
    assert not first.is_alive()
    assert call(sup, "which_children")[0].ref is child.current
    assert child.current is not first


def test_plain_ask_exception_does_not_restart() -> None:
    """Without the opt-in, an ask exception leaves the child running and unrestarted."""
    child = Starter("child1")
    sup = Supervisor.start([child.spec()])
    first = child.current
    with pytest.raises(ValueError, match="refused"):
        first.proxy().fail().get(timeout=TIMEOUT)
    assert call(sup, "which_children")[0].ref is first
    assert call(sup, "statistics").restarts == 0


@pytest.mark.usefixtures("shared_pool")
def test_custom_actor_kind_is_supervised() -> None:
    """A crashed actor whose loop runs on shared threads is restarted like a threaded one."""
    refs: list[pykka.ActorRef[Any]] = []

    def start() -> pykka.ActorRef[Any]:
        refs.append(SharedLoopActor.start())
        return refs[-1]

    sup = Supervisor.start([ChildSpec("shared", start)])
    crash(refs[0])
    assert call(sup, "which_children")[0].ref is refs[1]
    assert refs[1].ask("ping", timeout=TIMEOUT) == "pong"
    stop(sup)
    assert not refs[1].is_alive()
