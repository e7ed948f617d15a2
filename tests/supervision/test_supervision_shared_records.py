"""Temporary children share their supervisor's bookkeeping; watching an M:N actor wraps nothing."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

import pykka
import pytest
from _helpers import captured_logs
from _supervision_helpers import TIMEOUT, Worker, call, capture, crash_child, ids, stop

from praxo_actors.actors import MNActor, Scheduler
from supervisors import ChildCounts, ChildSpec, Down, DynamicSupervisor, Registry, _watch, monitor
from supervisors import _pykka_compat as compat


class _Start:
    """A start callable the test can watch through a weak reference."""

    def __call__(self) -> pykka.ActorRef[Any]:
        return Worker.start("w")


def test_a_running_temporary_child_keeps_no_spec() -> None:
    """Once a temporary child runs, its spec and start callable are the caller's alone."""
    sup = DynamicSupervisor.start()
    try:
        start = _Start()
        gone = weakref.ref(start)
        ref = call(sup, "start_child", ChildSpec("t", start, restart="temporary"))
        del start
        call(sup, "count_children")  # the supervisor's loop drops its last message
        gc.collect()
        assert gone() is None
        assert [(r.id, r.ref, r.restart) for r in call(sup, "which_children")] == [
            ("t", ref, "temporary")
        ]
    finally:
        stop(sup)


def test_mixed_children_are_listed_in_start_order_and_counted() -> None:
    """Shared temporary records and per-child records list together, in start order."""
    sup = DynamicSupervisor.start(max_children=4)
    try:
        a = call(sup, "start_child", ChildSpec("a", Worker.start))
        b = call(sup, "start_child", ChildSpec("b", Worker.start, restart="temporary"))
        c = call(sup, "start_child", ChildSpec("c", Worker.start, restart="transient"))
        d = call(
            sup,
            "start_child",
            ChildSpec("d", Worker.start, restart="temporary", type="supervisor"),
        )
        assert [r.ref for r in call(sup, "which_children")] == [a, b, c, d]
        assert call(sup, "count_children") == ChildCounts(4, 4, 1, 3)
        with pytest.raises(Exception) as full:  # temporaries count against max_children
            call(sup, "start_child", ChildSpec("e", Worker.start, restart="temporary"))
        assert getattr(full.value, "code", None) == "SUPERVISOR_MAX_CHILDREN"
        call(sup, "terminate_child", b)
        assert not b.is_alive()
        assert ids(sup) == ["a", "c", "d"]
        assert call(sup, "statistics").specs == 3
    finally:
        stop(sup)
    assert not d.is_alive() and not a.is_alive()


def test_a_temporary_child_that_crashes_is_reported_and_forgotten(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The shared monitor callback reports a temporary child's crash; it is not restarted."""
    sup = DynamicSupervisor.start()
    try:
        with captured_logs(caplog, "supervisors") as log:
            ref = call(sup, "start_child", ChildSpec("t", Worker.start, restart="temporary"))
            other = call(sup, "start_child", ChildSpec("u", Worker.start, restart="temporary"))
            crash_child(sup, ref)
        assert [r.ref for r in call(sup, "which_children")] == [other]
        crashed = capture(log, "child_crashed")
        assert [(e["child_id"], e["restart"]) for e in crashed] == [("t", "temporary")]
        assert capture(log, "child_restarted") == []
    finally:
        stop(sup)


class _Crashy(MNActor):
    def __init__(self, trace: list[str]) -> None:
        super().__init__()
        self.trace = trace

    def on_receive(self, message: Any) -> Any:
        raise RuntimeError(message)

    def on_failure(self, *_exc_info: object) -> None:
        self.trace.append("on_failure")


@pytest.fixture
def sched() -> Any:
    scheduler = Scheduler(2)
    yield scheduler
    scheduler.shutdown()


def test_an_mn_actor_reports_a_handler_crash_after_on_failure(sched: Scheduler) -> None:
    """The Down of an M:N actor's crash comes after its on_failure, with the exception."""
    trace: list[str] = []
    downs: list[Down] = []
    done = threading.Event()
    ref = _Crashy.start(trace, actor_scheduler=sched)

    def seen(down: Down) -> None:
        trace.append("down")
        downs.append(down)
        done.set()

    monitor(ref, seen)
    ref.tell("boom")
    assert done.wait(TIMEOUT)
    assert trace == ["on_failure", "down"]
    assert downs[0].reason == "crash" and isinstance(downs[0].exception, RuntimeError)


def test_an_mn_actor_killed_by_its_scheduler_is_reported(sched: Scheduler) -> None:
    """An actor its scheduler abandons never runs an exit; its monitors still hear of it."""
    other = Scheduler(1)
    ref = _Crashy.start([], actor_scheduler=other)
    downs: list[Down] = []
    monitor(ref, downs.append)
    other.shutdown()
    assert not ref.is_alive()
    assert [d.reason for d in downs] == ["normal"]


def test_watching_mn_actors_adds_no_tracked_object(sched: Scheduler) -> None:
    """A supervisor's and a registry's monitors on 200 M:N actors add no object for the
    collector per actor (before: a watch, its locks and table, wrappers and two dicts)."""
    registry = Registry()
    refs = [_Crashy.start([], actor_scheduler=sched) for _ in range(200)]
    try:
        gc.collect()
        before = len(gc.get_objects())
        for i, ref in enumerate(refs):
            monitor(ref, _ignore)
            registry.register(i, ref)
        gc.collect()
        added = len(gc.get_objects()) - before
        assert added / len(refs) < 0.1, added
    finally:
        for ref in refs:
            ref.stop(timeout=TIMEOUT)
    assert len(registry) == 0


def test_a_registered_temporary_mn_child_keeps_its_callbacks_in_its_watch(
    sched: Scheduler,
) -> None:
    """The sessions supervisor's and a registry's monitor callbacks on a temporary M:N child
    are kept in its watch (no slot of the shared table), which the collector does not track;
    each still delivers its Down."""
    sup = DynamicSupervisor.start()
    registry = Registry()
    try:
        before = len(_watch._callbacks)
        refs = [
            registry.register(
                i,
                call(
                    sup,
                    "start_child",
                    ChildSpec(
                        f"c{i}",
                        lambda: _Crashy.start([], actor_scheduler=sched),
                        restart="temporary",
                    ),
                ),
            )
            for i in range(20)
        ]
        assert len(_watch._callbacks) == before
        watches = [getattr(compat.actor_of(ref), _watch._WATCH) for ref in refs]
        assert not any(gc.is_tracked(watch) for watch in watches)
        assert all(watch.serial < 0 for watch in watches)  # not numbered: no table slot
        for ref in refs[:10]:
            ref.stop(timeout=TIMEOUT)
        assert sorted(registry.names()) == list(range(10, 20))  # type: ignore[type-var]
        assert call(sup, "count_children").active == 10
        assert len(_watch._callbacks) == before
    finally:
        stop(sup)
    assert len(registry) == 0


def _ignore(_down: Down) -> None:
    pass
