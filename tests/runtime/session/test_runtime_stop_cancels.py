"""A stop cancels: ``handle.stop()`` and ``runtime.stop()`` cancel the async callbacks in flight
and the agent-tool child runs of the runs they end, and publish each ended run's ``run.failed``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import captured_logs
from _runtime_helpers import TIMEOUT, Gate, caller, echo_agent, error_code

from praxo_actors import PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.models import Event, Request, Response, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.testing import EventRecorder, ManualClock
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]


class Hanging:
    """An async model that waits for an event nobody sets, and records its cancellation."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.cancelled = threading.Event()
        self.calls = 0

    async def __call__(self, request: Request) -> Response:
        self.calls += 1
        self.entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return Response(message_assistant("never"))

    def agent(self) -> object:
        """Return agent options using this model."""
        return new_agent_options(self)


def _failed(recorder: EventRecorder, session_id: str) -> Event:
    """The ``run.failed`` event of ``session_id`` (waited for)."""
    recorder.wait_for("run.failed", TIMEOUT)
    events = [e for e in recorder.events if e.type == "run.failed" and e.session_id == session_id]
    assert len(events) == 1, events
    return events[0]


@pytest.mark.parametrize("threads", [None, 1])
def test_a_session_stop_cancels_its_async_callback_and_publishes_run_failed(
    runtime: Start, threads: int | None
) -> None:
    """``handle.stop()`` cancels the async model in flight and publishes run.failed, with
    sessions on the loop or on a scheduler thread."""
    model = Hanging()
    rt = runtime(agents={"default": model.agent, "echo": echo_agent}, scheduler_threads=threads)
    recorder = EventRecorder()
    rt.events.subscribe(recorder, "run.*", session_id="s")
    future = rt.session("s").run("x")
    assert model.entered.wait(TIMEOUT)
    assert rt.session("s").stop(timeout=TIMEOUT)
    assert error_code(future) == "AGENT_CANCELLED"
    assert model.cancelled.wait(TIMEOUT)
    assert _failed(recorder, "s").data["code"] == "AGENT_CANCELLED"
    assert rt.session("s").history() == []
    assert rt.session("s", agent="echo").run("next").get(timeout=TIMEOUT).output == "next"


def test_a_session_stop_fails_queued_runs_without_starting_them(runtime: Start) -> None:
    """Runs queued behind the one in flight fail AGENT_CANCELLED; the model is called once."""
    model = Hanging()
    rt = runtime(agents={"default": model.agent})
    first = rt.session("s").run("a")
    assert model.entered.wait(TIMEOUT)
    queued = [rt.session("s").run(f"q{i}") for i in range(3)]
    assert rt.inspect("s").queued_runs == 3
    assert rt.session("s").stop(timeout=TIMEOUT)
    assert [error_code(f) for f in (first, *queued)] == ["AGENT_CANCELLED"] * 4
    assert model.cancelled.wait(TIMEOUT)
    assert model.calls == 1


@pytest.mark.parametrize("threads", [None, 1])
def test_a_session_stop_cancels_an_agent_tool_child_run(
    runtime: Start, threads: int | None
) -> None:
    """The child run of the stopped run's agent tool fails AGENT_CANCELLED and its callback is
    cancelled; both runs publish run.failed."""
    model = Hanging()
    agents = {"helper": model.agent, "boss": caller("helper")}
    rt = runtime(agents=agents, scheduler_threads=threads)
    recorders = {sid: EventRecorder() for sid in ("s", "s/helper")}
    for sid, recorder in recorders.items():
        rt.events.subscribe(recorder, "run.failed", session_id=sid)
    future = rt.session("s", "boss").run("hi")
    assert model.entered.wait(TIMEOUT)
    assert rt.session("s", "boss").stop(timeout=TIMEOUT)
    assert error_code(future) == "AGENT_CANCELLED"
    assert model.cancelled.wait(TIMEOUT)
    for recorder in recorders.values():
        assert recorder.wait_for("run.failed", TIMEOUT).data["code"] == "AGENT_CANCELLED"
    assert rt.session("s/helper", "helper").history() == []


@pytest.mark.parametrize("threads", [None, 1])
def test_a_runtime_stop_publishes_runtime_stopped_and_cancels_callbacks(
    runtime: Start, threads: int | None
) -> None:
    """``runtime.stop()`` publishes run.failed RUNTIME_STOPPED for every run in flight (a
    subscriber sees it before the bus stops) and cancels their async callbacks, the agent-tool
    child's included."""
    model = Hanging()
    parent = Hanging()
    agents = {"helper": model.agent, "boss": caller("helper"), "solo": parent.agent}
    rt = runtime(agents=agents, scheduler_threads=threads)
    recorder = EventRecorder()
    rt.events.subscribe(recorder, "run.failed")
    futures = [rt.session("s", "boss").run("hi"), rt.session("t", "solo").run("x")]
    assert model.entered.wait(TIMEOUT)
    assert parent.entered.wait(TIMEOUT)
    rt.stop()
    assert [error_code(f) for f in futures] == ["RUNTIME_STOPPED"] * 2
    assert model.cancelled.wait(TIMEOUT)
    assert parent.cancelled.wait(TIMEOUT)
    codes = {e.session_id: e.data["code"] for e in recorder.events}
    assert codes == {"s": "RUNTIME_STOPPED", "t": "RUNTIME_STOPPED", "s/helper": "RUNTIME_STOPPED"}


def test_a_runtime_stop_ends_an_event_stream_after_the_run_failed(runtime: Start) -> None:
    """``runtime.events.stream`` yields the run's run.failed before it ends at the stop."""
    model = Hanging()
    rt = runtime(agents={"default": model.agent})

    async def main() -> list[str]:
        seen: list[str] = []
        async with rt.events.stream("run.*", session_id="s") as events:
            rt.session("s").run("x")
            assert await asyncio.to_thread(model.entered.wait, TIMEOUT)
            stopper = asyncio.create_task(rt.astop())
            async with asyncio.timeout(TIMEOUT):
                async for event in events:
                    seen.append(f"{event.type}:{event.data.get('code', '')}")
            await stopper
        return seen

    assert asyncio.run(main()) == ["run.started:", "run.failed:RUNTIME_STOPPED"]
    assert model.cancelled.wait(TIMEOUT)


def test_a_sync_callbacks_late_outcome_after_a_session_stop_is_discarded(
    runtime: Start, caplog: pytest.LogCaptureFixture
) -> None:
    """A sync model cannot be interrupted: the run fails at the stop, its late answer is
    dropped without an error logged, and the session serves the next run."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent, "echo": echo_agent})
    recorder = EventRecorder()
    rt.events.subscribe(recorder, "run.*", session_id="s")
    with captured_logs(caplog, "praxo_actors", logging.WARNING) as logs:
        future = rt.session("s").run("x")
        gate.entered(1)
        assert rt.session("s").stop(timeout=TIMEOUT)
        assert error_code(future) == "AGENT_CANCELLED"
        assert _failed(recorder, "s").data["code"] == "AGENT_CANCELLED"
        gate.release()
        assert rt.session("s", agent="echo").run("next").get(timeout=TIMEOUT).output == "next"
        assert [m.content for m in rt.session("s", agent="echo").history()] == ["next", "next"]
        rt.stop()
    assert logs == []


def test_a_sync_callbacks_late_outcome_after_a_runtime_stop_is_discarded(
    runtime: Start, caplog: pytest.LogCaptureFixture
) -> None:
    """A sync model still running when the runtime stops: its run fails RUNTIME_STOPPED at
    once, and its late answer logs no error (the fixture checks its thread ended)."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent})
    with captured_logs(caplog, "praxo_actors", logging.WARNING) as logs:
        future = rt.session("s").run("x")
        gate.entered(1)
        stopper = threading.Thread(target=rt.stop)
        stopper.start()
        assert error_code(future) == "RUNTIME_STOPPED"
        gate.release()
        stopper.join(TIMEOUT)
        assert not stopper.is_alive()
    assert logs == []


def test_a_deadline_cancels_an_async_callback_of_a_session_on_a_scheduler_thread(
    runtime: Start,
) -> None:
    """A session run by a scheduler thread: at the deadline its async model is cancelled."""
    model = Hanging()
    clock = ManualClock()
    rt = runtime(agents={"default": model.agent}, scheduler_threads=1, clock=clock)
    future = rt.session("s").run("x", deadline=60)
    assert model.entered.wait(TIMEOUT)
    clock.advance(60)
    assert error_code(future) == "AGENT_DEADLINE"
    assert model.cancelled.wait(TIMEOUT)


def test_a_durable_run_a_session_stop_ended_is_not_resumed_after_a_restart(
    tmp_path: Path,
) -> None:
    """A session stop ends a durable run for good: a runtime started with resume=True on the
    same store finds it failed AGENT_CANCELLED and calls no model again."""
    path = tmp_path / "s.sqlite3"
    model = Hanging()
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        rt.register_agent("default", model.agent, durable=True)
        future = rt.session("s").run("go")
        assert model.entered.wait(TIMEOUT)
        assert rt.session("s").stop(timeout=TIMEOUT)
        assert error_code(future) == "AGENT_CANCELLED"
    finally:
        rt.stop()
    again = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT, resume=True)
    try:
        again.register_agent("default", model.agent, durable=True)
        with pytest.raises(PraxoError) as info:
            again.session("s").result(future.run_id, timeout=TIMEOUT)
        assert info.value.code == "AGENT_CANCELLED"
        assert again.session("s").history() == []
        assert model.calls == 1
    finally:
        again.stop()


def test_a_runtime_stop_delivers_every_run_failed_to_a_slow_subscriber(runtime: Start) -> None:
    """A subscriber that takes its time gets the run.failed of every run the stop ended: the
    bus hands over what it routed before it ends the subscriptions."""
    model = Hanging()
    rt = runtime(agents={"default": model.agent})
    failed: list[str] = []
    work = threading.Event()  # never set: each call takes 20 ms of a subscriber's own work

    def slow(event: Event) -> None:
        work.wait(0.02)
        failed.append(event.session_id)

    rt.events.subscribe(slow, "run.failed")
    futures = [rt.session(f"s{i}").run("x") for i in range(20)]
    eventually(lambda: model.calls == 20)
    rt.stop()
    assert {error_code(f) for f in futures} == {"RUNTIME_STOPPED"}
    assert sorted(failed) == sorted(f"s{i}" for i in range(20))
