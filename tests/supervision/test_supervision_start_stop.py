"""Starting in order with rollback, stopping in reverse order, abandoning stuck children."""

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
    Trace,
    Worker,
    call,
    capture,
    ids,
    stop,
)

from praxo_actors.testing._eventually import eventually
from supervisors import ChildSpec, Supervisor, SupervisorError


def _supervisors() -> list[pykka.ActorRef[Any]]:
    return pykka.ActorRegistry.get_by_class(Supervisor)


def test_children_start_in_order_and_stop_in_reverse() -> None:
    """Children start left to right and stop right to left when the supervisor stops."""
    trace = Trace()
    starters = [Starter(name, trace) for name in ("child1", "child2", "child3")]
    sup = Supervisor.start([s.spec() for s in starters])
    assert trace.of("start") == ["child1", "child2", "child3"]
    assert ids(sup) == ["child1", "child2", "child3"]
    stop(sup)
    assert trace.of("stop") == ["child3", "child2", "child1"]
    assert not any(s.current.is_alive() for s in starters)


@pytest.mark.parametrize("how", ["raise", "on_start"])
def test_failed_start_rolls_back_in_reverse(how: str, caplog: pytest.LogCaptureFixture) -> None:
    """A child that fails to start stops the started ones in reverse order and fails the start."""
    trace = Trace()
    starters = [Starter(name, trace) for name in ("child1", "child2", "child3")]
    starters[2].fail = how
    with captured_logs(caplog, "supervisors") as logs, pytest.raises(SupervisorError) as failed:
        Supervisor.start([s.spec() for s in starters])
    assert failed.value.code == "SUPERVISOR_START_FAILED"
    assert "child3" in failed.value.message
    assert trace.of("stop") == ["child2", "child1"]
    assert _supervisors() == []
    [report] = capture(logs, "child_start_failed")
    assert report["child_id"] == "child3"


def test_start_timeout_fails_the_start(caplog: pytest.LogCaptureFixture) -> None:
    """A child whose on_start outlasts start_timeout is a failed start."""
    release = threading.Event()

    class SlowStart(Worker):
        def on_start(self) -> None:
            release.wait(timeout=TIMEOUT)

    spec = ChildSpec("slow", SlowStart.start, start_timeout=0.05, shutdown=0.05)
    with captured_logs(caplog, "supervisors") as logs, pytest.raises(SupervisorError) as failed:
        Supervisor.start([spec])
    release.set()
    assert failed.value.code == "SUPERVISOR_START_FAILED"
    assert capture(logs, "child_abandoned")[0]["child_id"] == "slow"


def test_start_returning_something_else_fails() -> None:
    """A start callable that returns no ActorRef is a failed start."""
    spec = ChildSpec("odd", lambda: "not a ref")  # type: ignore[arg-type,return-value]
    with pytest.raises(SupervisorError) as failed:
        Supervisor.start([spec])
    assert failed.value.code == "SUPERVISOR_START_FAILED"


@pytest.mark.parametrize(
    "flags",
    [
        {"strategy": "none_for_one"},
        {"max_restarts": -1},
        {"max_restarts": 1.5},
        {"max_seconds": 0},
        {"max_seconds": float("inf")},
        {"auto_shutdown": "sometimes"},
        {"clock": 5},
    ],
)
def test_invalid_flags_start_nothing(flags: dict[str, Any]) -> None:
    """Bad supervisor flags raise SUPERVISOR_INVALID_SPEC before anything starts (OTP sup_flags)."""
    child = Starter("child1")
    with pytest.raises(SupervisorError) as invalid:
        Supervisor.start([child.spec()], **flags)
    assert invalid.value.code == "SUPERVISOR_INVALID_SPEC"
    assert child.attempts == 0
    assert _supervisors() == []


def test_duplicate_ids_and_bad_specs_are_rejected() -> None:
    """Duplicate ids, non-specs and significant children without auto_shutdown are invalid."""
    child = Starter("child1")
    bad: list[list[Any]] = [
        [child.spec(), child.spec()],
        ["child1"],
        [child.spec(restart="transient", significant=True)],
    ]
    for children in bad:
        with pytest.raises(SupervisorError) as invalid:
            Supervisor.start(children)
        assert invalid.value.code == "SUPERVISOR_INVALID_SPEC"
    assert child.attempts == 0


def _stuck(sup: pykka.ActorRef[Any], child_id: str) -> threading.Event:
    """Block a child in a message handler; return the event that releases it."""
    entered, release = threading.Event(), threading.Event()
    ref = next(r.ref for r in call(sup, "which_children") if r.id == child_id)
    ref.tell(("block", entered, release))
    assert entered.wait(TIMEOUT)
    return release


def test_a_stuck_child_that_stops_within_its_shutdown_time_is_not_abandoned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """terminate_child waits for a stuck child: released while the supervisor waits, the
    child stops normally, and nothing is abandoned."""
    stuck = Starter("stuck")
    sup = Supervisor.start([stuck.spec(shutdown=60.0)])  # far beyond this test's waits
    release = _stuck(sup, "stuck")
    ref = stuck.current
    stuck_down = DownWaiter(ref)
    terminating = threading.Thread(target=call, args=(sup, "terminate_child", "stuck"))
    try:
        with captured_logs(caplog, "supervisors") as logs:
            terminating.start()
            # Its stop request, behind the stuck message.
            eventually(ref.actor_inbox.qsize, what="the child asked to stop")
            release.set()
            terminating.join(TIMEOUT)
            assert not terminating.is_alive()
        assert capture(logs, "child_abandoned") == []
        assert call(sup, "statistics").abandoned == 0
    finally:
        release.set()
    assert stuck_down.wait().reason == "normal"
    stop(sup)


def test_stuck_child_is_abandoned_after_its_shutdown_time(caplog: pytest.LogCaptureFixture) -> None:
    """terminate_child waits shutdown seconds for a stuck child, then abandons and reports it."""
    stuck = Starter("stuck")
    sup = Supervisor.start([stuck.spec(shutdown=0.1)])
    release = _stuck(sup, "stuck")
    stuck_down = DownWaiter(stuck.current)
    try:
        with captured_logs(caplog, "supervisors") as logs:
            call(sup, "terminate_child", "stuck")
        [report] = capture(logs, "child_abandoned")
        assert (report["child_id"], report["shutdown"]) == ("stuck", 0.1)
        assert call(sup, "statistics").abandoned == 1
        assert call(sup, "which_children")[0].ref is None
    finally:
        release.set()
    assert stuck_down.wait().reason == "normal"  # it took its stop message once released


def test_stuck_child_does_not_hold_up_the_supervisor_stop(caplog: pytest.LogCaptureFixture) -> None:
    """Stopping a supervisor abandons a stuck child after its shutdown time and stops the rest."""
    trace = Trace()
    before, stuck, after = (
        Starter("before", trace),
        Starter("stuck", trace),
        Starter("after", trace),
    )
    sup = Supervisor.start([before.spec(), stuck.spec(shutdown=0.1), after.spec()])
    release = _stuck(sup, "stuck")
    try:
        with captured_logs(caplog, "supervisors") as logs:
            stop(sup)
        assert trace.of("stop") == ["after", "before"]
        assert [e["child_id"] for e in capture(logs, "child_abandoned")] == ["stuck"]
    finally:
        release.set()


def test_any_significant_child_shuts_the_supervisor_down() -> None:
    """With any_significant, a significant child that ends stops the supervisor normally."""
    trace = Trace()
    main, helper = Starter("main", trace), Starter("helper", trace)
    sup = Supervisor.start(
        [helper.spec(), main.spec(restart="transient", significant=True)],
        auto_shutdown="any_significant",
    )
    sup_down = DownWaiter(sup)
    stop(main.current)
    assert sup_down.wait().reason == "normal"
    assert trace.of("stop") == ["main", "helper"]


def test_all_significant_waits_for_the_last_one() -> None:
    """With all_significant, the supervisor stops only when its last significant child has ended."""
    one, two = Starter("one"), Starter("two")
    sup = Supervisor.start(
        [
            one.spec(restart="temporary", significant=True),
            two.spec(restart="temporary", significant=True),
        ],
        auto_shutdown="all_significant",
    )
    sup_down = DownWaiter(sup)
    stop(one.current)
    assert ids(sup) == ["two"]
    stop(two.current)
    assert sup_down.wait().reason == "normal"
