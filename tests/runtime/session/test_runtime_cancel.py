"""Cancellation, deadlines and stopping: runs end with a code, and nothing is left running."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from _helpers import assert_no_new_threads
from _runtime_helpers import TIMEOUT, Gate, contents, echo_agent, error_code

from praxo_actors import PraxoError
from praxo_actors.agent import AgentError, Tool, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import RunFuture, Runtime
from praxo_actors.testing import ManualClock, ScriptedModel
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]


class _BlockingTool:
    """A tool whose calls wait until released; ``entered`` is set when a call starts."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.released = threading.Event()

    def __call__(self, args: dict[str, Any]) -> str:
        self.entered.set()
        if not self.released.wait(TIMEOUT):
            raise TimeoutError("the tool was never released")
        return "ok"

    def tool(self) -> Tool:
        return Tool("wait", "Wait until released.", {"type": "object"}, self)


def test_cancel_removes_a_queued_run_at_once(runtime: Start) -> None:
    """Cancelling a queued run fails it with AGENT_CANCELLED before the running one ends."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent})
    handle = rt.session("s1")
    running = handle.run("a")
    gate.entered(1)
    queued = handle.run("b")
    assert queued.cancel() is True
    with pytest.raises(AgentError) as info:
        queued.get(timeout=TIMEOUT)
    assert info.value.code == "AGENT_CANCELLED"
    assert info.value.run_id == queued.run_id
    assert not running.done()
    gate.release()
    assert running.get(timeout=TIMEOUT).output == "a!"
    assert gate.calls == 1
    assert contents(handle.history()) == ["a", "a!"]


def test_cancel_stops_a_run_in_flight_at_the_next_step(runtime: Start) -> None:
    """Cancelling a run while its tool runs fails it at the next step, committing nothing."""
    blocking = _BlockingTool()
    model = ScriptedModel([ToolCall("wait", {})])
    rt = runtime(agents={"default": lambda: new_agent_options(model, tools=[blocking.tool()])})
    handle = rt.session("s1")
    future = handle.run("go")
    assert blocking.entered.wait(TIMEOUT)
    assert future.cancel() is True
    assert not future.done()  # cooperative: the tool call in flight finishes first
    blocking.released.set()
    assert error_code(future) == "AGENT_CANCELLED"
    assert len(model.requests) == 1
    assert handle.history() == []
    assert rt.session("s1").live


def test_cancelled_run_that_needs_no_further_step_completes(runtime: Start) -> None:
    """A run cancelled during its final model call completes: cancellation is cooperative."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent})
    future = rt.session("s1").run("last")
    gate.entered(1)
    assert future.cancel() is True
    gate.release()
    assert future.get(timeout=TIMEOUT).output == "last!"
    assert contents(rt.session("s1").history()) == ["last", "last!"]


def test_cancel_after_the_run_ended_returns_false(runtime: Start) -> None:
    """Cancelling a completed run returns False and leaves its result."""
    rt = runtime(agents={"default": echo_agent})
    future = rt.session("s1").run("x")
    assert future.get(timeout=TIMEOUT).output == "x"
    assert future.cancel() is False
    assert future.get(timeout=TIMEOUT).output == "x"


def test_cancel_of_a_refused_run_returns_false(runtime: Start) -> None:
    """A run refused at admission is already over, so cancelling it returns False."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent}, on_busy="reject")
    running = rt.session("s1").run("a")
    gate.entered(1)
    refused = rt.session("s1").run("b")
    assert error_code(refused) == "SESSION_BUSY"
    assert refused.cancel() is False
    gate.release()
    running.get(timeout=TIMEOUT)


def test_cancelled_run_raises_when_awaited(runtime: Start) -> None:
    """Awaiting a cancelled run from asyncio raises AgentError AGENT_CANCELLED."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent})
    running = rt.session("s1").run("a")
    gate.entered(1)
    queued = rt.session("s1").run("b")

    async def main() -> str:
        queued.cancel()
        try:
            await queued
        except AgentError as exc:
            return exc.code
        return "completed"

    assert asyncio.run(main()) == "AGENT_CANCELLED"
    gate.release()
    running.get(timeout=TIMEOUT)


def test_zero_deadline_fails_before_the_model_is_called(runtime: Start) -> None:
    """A run whose deadline has passed when it starts fails with AGENT_DEADLINE, model unused."""
    gate = Gate()
    gate.release()
    rt = runtime(agents={"default": gate.agent})
    assert error_code(rt.session("s1").run("x", deadline=0)) == "AGENT_DEADLINE"
    assert gate.calls == 0
    assert rt.session("s1").run("y", deadline=TIMEOUT).get(timeout=TIMEOUT).output == "y!"


def test_a_deadline_passing_during_a_tool_call_ends_the_run(runtime: Start) -> None:
    """A deadline that passes while a tool runs fails the run AGENT_DEADLINE: no step follows."""
    clock = ManualClock()

    def slow(args: dict[str, Any]) -> str:
        clock.advance(61)  # the call outlasts the run's deadline of 60 s
        return "late"

    model = ScriptedModel([ToolCall("slow", {}), "never"])
    tool = Tool("slow", "Outlast the deadline.", {"type": "object"}, slow)
    rt = runtime(agents={"default": lambda: new_agent_options(model, tools=[tool])}, clock=clock)
    future = rt.session("s1").run("go", deadline=60)
    assert error_code(future) == "AGENT_DEADLINE"
    assert len(model.requests) == 1
    assert rt.session("s1").history() == []


def test_deadline_passing_while_queued_fails_without_a_model_call(runtime: Start) -> None:
    """A queued run whose deadline passes before its turn fails with AGENT_DEADLINE."""
    gate = Gate()
    clock = ManualClock()
    rt = runtime(agents={"default": gate.agent}, clock=clock)
    handle = rt.session("s1")
    running = handle.run("a")
    gate.entered(1)
    queued = handle.run("b", deadline=60)
    assert rt.inspect("s1").queued_runs == 1  # its deadline timer is set
    clock.advance(61)
    gate.release()
    assert running.get(timeout=TIMEOUT).output == "a!"
    assert error_code(queued) == "AGENT_DEADLINE"
    assert gate.calls == 1


def test_bad_deadlines_are_refused(runtime: Start) -> None:
    """A deadline that is not a finite number of seconds >= 0 raises RUNTIME_INVALID_INPUT."""
    rt = runtime(agents={"default": echo_agent})
    handle = rt.session("s1")
    for bad in (float("nan"), float("inf"), -1, True, "5"):
        with pytest.raises(PraxoError) as info:
            handle.run("x", deadline=bad)  # type: ignore[arg-type]
        assert info.value.code == "RUNTIME_INVALID_INPUT"
    assert rt.statistics().runs_started == 0


def test_stop_fails_runs_in_flight_and_leaves_no_thread(runtime: Start) -> None:
    """``stop()`` with runs in flight and queued fails them all with RUNTIME_STOPPED."""
    before = set(threading.enumerate())
    gate = Gate()
    rt = Runtime.start(idle_timeout=0.5, timeout=TIMEOUT)
    try:
        rt.register_agent("default", gate.agent)
        futures = [rt.session(f"s{i}").run(f"{n}") for i in range(3) for n in range(2)]
        gate.entered(3)
        stopper = threading.Thread(target=rt.stop)
        stopper.start()
        assert [error_code(f) for f in futures] == ["RUNTIME_STOPPED"] * 6
    finally:
        gate.release()
        rt.stop()
    stopper.join(TIMEOUT)
    assert not stopper.is_alive()
    assert_no_new_threads(before, TIMEOUT)


def test_runs_sent_while_the_runtime_stops_all_end(runtime: Start) -> None:
    """Runs sent from many threads during ``stop()`` complete or fail with RUNTIME_STOPPED."""
    rt = runtime(agents={"default": echo_agent}, max_queue=10_000)
    futures: list[RunFuture] = []
    started = threading.Barrier(5, timeout=TIMEOUT)

    def send(k: int) -> None:
        started.wait()
        # Until the runtime refuses: the last runs of each sender race with stop().
        for i in range(5_000):
            future = rt.session(f"s{k}-{i % 5}").run("x")
            futures.append(future)
            if future.done() and future._exc_info is not None:
                return

    senders = [threading.Thread(target=send, args=(k,)) for k in range(4)]
    for sender in senders:
        sender.start()
    started.wait()
    eventually(lambda: any(f.done() and f._exc_info is None for f in list(futures)))
    rt.stop()
    for sender in senders:
        sender.join(TIMEOUT)
        assert not sender.is_alive()
    outcomes = set()
    for future in futures:
        try:
            outcomes.add(future.get(timeout=TIMEOUT).output)
        except PraxoError as exc:
            outcomes.add(exc.code)
    assert outcomes == {"x", "RUNTIME_STOPPED"}
    assert rt.statistics().runs_pending == 0


def test_runs_after_stop_fail_with_runtime_stopped(runtime: Start) -> None:
    """A run sent to a stopped runtime fails with RUNTIME_STOPPED; stopping again is harmless."""
    rt = runtime(agents={"default": echo_agent})
    handle = rt.session("s1")
    handle.run("before").get(timeout=TIMEOUT)
    rt.stop()
    assert error_code(handle.run("after")) == "RUNTIME_STOPPED"
    rt.stop()


def test_async_model_in_flight_is_cancelled_by_stop(runtime: Start) -> None:
    """An ``async def`` model awaiting forever does not keep ``stop()`` waiting."""
    entered = threading.Event()

    async def model(request: Request) -> Response:
        entered.set()
        await asyncio.Event().wait()  # never set: only stop() ends this call
        return Response(message_assistant("unreachable"))

    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    future = rt.session("s1").run("x")
    assert entered.wait(TIMEOUT)
    # stop() ends although the call never would: the wait is bounded, not timed.
    stopper = threading.Thread(target=rt.stop)
    stopper.start()
    stopper.join(TIMEOUT)
    assert not stopper.is_alive(), "stop() waited for the model call"
    assert error_code(future) == "RUNTIME_STOPPED"


def test_runtime_works_as_a_context_manager(runtime: Start) -> None:
    """Leaving a ``with Runtime.start()`` block stops it and fails later runs."""
    with Runtime.start(idle_timeout=None, timeout=TIMEOUT) as rt:
        rt.register_agent("default", echo_agent)
        assert rt.session("s1").run("in").get(timeout=TIMEOUT).output == "in"
    assert error_code(rt.session("s1").run("out")) == "RUNTIME_STOPPED"


def test_runtime_works_as_an_async_context_manager(runtime: Start) -> None:
    """``async with Runtime.start()`` runs and awaits runs, then stops without blocking the loop."""

    async def main() -> str:
        async with Runtime.start(idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", echo_agent)
            result = await rt.session("s1").run("async")
        assert error_code(rt.session("s1").run("after")) == "RUNTIME_STOPPED"
        return result.output

    assert asyncio.run(main()) == "async"
