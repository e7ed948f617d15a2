"""Monitors: one Down per stop, for both of Pykka's failure paths and any actor kind."""

from __future__ import annotations

import threading
from typing import Any

import pykka
import pytest
from _helpers import captured_logs
from _supervision_helpers import (
    TIMEOUT,
    Crash,
    DownWaiter,
    SharedLoopActor,
    StartFailure,
    Trace,
    Worker,
    crash,
    stop,
)

from supervisors import Down, monitor


def test_normal_stop_delivers_normal_down() -> None:
    """A stop message ends the actor with reason normal, after its on_stop has run."""
    trace = Trace()
    ref = Worker.start("a", trace)
    waiter = DownWaiter(ref)
    stop(ref)
    down = waiter.wait()
    assert (down.ref, down.reason, down.exception) == (ref, "normal", None)
    assert trace.of("stop") == ["a"]


def test_tell_exception_delivers_crash_down() -> None:
    """An exception in a tell handler ends the actor with reason crash and that exception."""
    ref = Worker.start("a")
    down = crash(ref)
    assert down.reason == "crash"
    assert isinstance(down.exception, Crash)
    assert not ref.is_alive()


def test_crash_down_comes_after_on_failure() -> None:
    """A handler's crash is reported once the actor's on_failure has run."""
    trace = Trace()
    ref = Worker.start("a", trace)
    failures_seen_at_down: list[list[str]] = []
    monitor(ref, lambda _down: failures_seen_at_down.append(trace.of("failure")))
    crash(ref)
    assert failures_seen_at_down == [["a"]]


def test_ask_exception_is_not_a_crash() -> None:
    """An exception in an ask handler goes to the caller and the actor lives on (Pykka)."""
    ref = Worker.start("a")
    waiter = DownWaiter(ref)
    with pytest.raises(ValueError, match="refused"):
        ref.proxy().fail().get(timeout=TIMEOUT)
    assert ref.ask("ping", timeout=TIMEOUT) == "pong"
    assert waiter.downs == []
    stop(ref)
    assert waiter.wait().reason == "normal"


def test_on_stop_exception_is_a_crash() -> None:
    """An exception in on_stop turns a stop into a crash."""
    ref = Worker.start("a", fail_on_stop=True)
    waiter = DownWaiter(ref)
    ref.stop(timeout=TIMEOUT)
    down = waiter.wait()
    assert down.reason == "crash"
    assert isinstance(down.exception, Crash)


def test_on_failure_exception_still_gives_one_down() -> None:
    """An exception in on_failure after a crash gives exactly one Down, with the first error."""
    ref = Worker.start("a", fail_on_failure=True)
    seen: list[Down] = []
    monitor(ref, seen.append)
    down = crash(ref)
    assert isinstance(down.exception, Crash)
    assert str(down.exception) == "a crashed"
    assert len(seen) == 1


def test_on_start_exception_is_a_crash() -> None:
    """An exception in on_start ends the actor as a crash (or noproc if it was already dead)."""
    release = threading.Event()

    class SlowFailingStart(Worker):
        def on_start(self) -> None:
            release.wait(timeout=TIMEOUT)
            raise StartFailure("no")

    ref = SlowFailingStart.start("a")
    waiter = DownWaiter(ref)  # set up while on_start is still running
    release.set()
    down = waiter.wait()
    assert down.reason == "crash"
    assert isinstance(down.exception, StartFailure)


def test_monitor_of_dead_actor_gets_noproc_at_once() -> None:
    """Monitoring a stopped actor delivers Down(noproc) at once, in the caller's thread."""
    ref = Worker.start("a")
    stop(ref)
    seen: list[tuple[Down, threading.Thread]] = []
    monitor(ref, lambda down: seen.append((down, threading.current_thread())))
    assert [(d.reason, t) for d, t in seen] == [("noproc", threading.current_thread())]


def test_one_down_per_stop_for_every_monitor_in_order() -> None:
    """Each monitor gets exactly one Down, in the order the monitors were set up."""
    ref = Worker.start("a")
    order: list[str] = []
    monitor(ref, lambda _d: order.append("first"))
    monitor(ref, lambda _d: order.append("second"))
    stop(ref)
    assert ref.stop(timeout=TIMEOUT) is False  # a second stop finds it dead
    assert order == ["first", "second"]


def test_cancelled_monitor_gets_nothing() -> None:
    """A cancelled monitor is not called, and cancelling twice reports that it was already off."""
    ref = Worker.start("a")
    seen: list[Down] = []
    handle = monitor(ref, seen.append)
    assert handle.cancel() is True
    assert handle.cancel() is False
    stop(ref)
    assert seen == []


def test_failing_callback_is_reported_and_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A callback that raises is reported in the log and does not stop the others."""
    ref = Worker.start("a")
    seen: list[Down] = []

    def broken(_down: Down) -> None:
        raise RuntimeError("callback bug")

    monitor(ref, broken)
    monitor(ref, seen.append)
    with captured_logs(caplog, "supervisors") as logs:
        stop(ref)
    assert [d.reason for d in seen] == ["normal"]
    failures = [e for e in logs if e["event"] == "monitor_callback_failed"]
    assert len(failures) == 1
    assert "callback bug" in failures[0]["error"]


def test_callback_runs_before_stop_returns() -> None:
    """The Down is delivered before Pykka's blocking stop() returns to its caller."""
    ref = Worker.start("a")
    seen: list[Down] = []
    monitor(ref, seen.append)
    ref.stop(timeout=TIMEOUT)
    assert len(seen) == 1


@pytest.mark.usefixtures("shared_pool")
def test_custom_actor_kind_normal_stop() -> None:
    """An actor with its own loop on shared threads reports a normal stop."""
    ref = SharedLoopActor.start()
    assert ref.ask("ping", timeout=TIMEOUT) == "pong"
    waiter = DownWaiter(ref)
    stop(ref)
    assert waiter.wait().reason == "normal"


@pytest.mark.usefixtures("shared_pool")
def test_custom_actor_kind_crash() -> None:
    """An actor with its own loop on shared threads reports a tell crash with its exception."""
    ref: pykka.ActorRef[Any] = SharedLoopActor.start()
    assert ref.ask("ping", timeout=TIMEOUT) == "pong"
    down = crash(ref)
    assert down.reason == "crash"
    assert isinstance(down.exception, Crash)
