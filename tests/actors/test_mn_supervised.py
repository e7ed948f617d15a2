"""An MNActor child of a ``supervisors.Supervisor`` is restarted like a thread-per-actor child."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pykka
import pytest

from praxo_actors.actors import MNActor, Scheduler
from supervisors import ChildSpec, Down, Supervisor, monitor

WAIT = 5.0


class Crash(Exception):
    """The exception the echo actor crashes with."""


class Echo(MNActor):
    """Echoes each message back, and crashes on ``"crash"``."""

    def on_receive(self, message: Any) -> Any:
        if message == "crash":
            raise Crash("told to crash")
        return ("echo", message)


class EchoStarts:
    """A child's start callable: starts an Echo on one scheduler and keeps every ref."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.refs: list[pykka.ActorRef[Any]] = []
        self.restarted = threading.Event()

    def __call__(self) -> pykka.ActorRef[Any]:
        self.refs.append(Echo.start(actor_scheduler=self.scheduler))
        if len(self.refs) == 2:
            self.restarted.set()
        return self.refs[-1]


@pytest.fixture
def scheduler(no_thread_leaks: None) -> Iterator[Scheduler]:
    """A two-thread scheduler, shut down after the test; no thread may outlive it."""
    sched = Scheduler(2, name="test-mn-sup")
    yield sched
    sched.shutdown(timeout=WAIT)


def test_a_crashed_mn_child_is_restarted_and_the_replacement_answers(
    scheduler: Scheduler,
) -> None:
    """A permanent MNActor child that crashes in a tell handler is replaced by a live one."""
    starts = EchoStarts(scheduler)
    sup = Supervisor.start([ChildSpec("echo", starts, restart="permanent")], "one_for_one")
    try:
        first = starts.refs[0]
        assert first.ask("hi", timeout=WAIT) == ("echo", "hi")
        downs: list[Down] = []
        down = threading.Event()

        def on_down(notice: Down) -> None:
            downs.append(notice)
            down.set()

        monitor(first, on_down)
        first.tell("crash")
        assert down.wait(WAIT)
        assert downs[0].reason == "crash"
        assert isinstance(downs[0].exception, Crash)
        assert starts.restarted.wait(WAIT)
        assert not first.is_alive()
        replacement = starts.refs[1]
        assert replacement is not first
        assert replacement.ask("again", timeout=WAIT) == ("echo", "again")
        children = sup.proxy().which_children().get(timeout=WAIT)
        assert [(child.id, child.ref) for child in children] == [("echo", replacement)]
        assert sup.proxy().statistics().get(timeout=WAIT).restarts == 1
        assert len(starts.refs) == 2
    finally:
        assert sup.stop(timeout=WAIT) is True
    assert not starts.refs[-1].is_alive()
