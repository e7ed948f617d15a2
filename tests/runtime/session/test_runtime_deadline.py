"""Deadlines and hard cancellation bound a run even while a callback is in flight.

Deadlines run on a :class:`ManualClock`: each test moves time itself, and ``advance`` returns
once the runtime has acted on what fell due.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable

from _runtime_helpers import TIMEOUT, Gate, echo_agent, error_code

from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.runtime import RunFuture, Runtime
from praxo_actors.testing import ManualClock
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]


class _Hanging:
    """An async model that waits for an event nobody sets, and records its cancellation."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.cancelled = threading.Event()

    async def __call__(self, request: Request) -> Response:
        self.entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return Response(message_assistant("never"))


def _queued(rt: Runtime, session_id: str, n: int) -> None:
    """Wait until the session holds ``n`` queued runs, their deadline timers set on the clock
    (the session answers in order; the loop round trip comes after the timers' arming)."""
    assert rt.inspect(session_id).queued_runs == n
    rt.statistics()


def _runs_until(rt: Runtime, clock: ManualClock, future: RunFuture, deadline: float) -> None:
    """Move the clock to just short of ``deadline``: the run still runs (checked after a loop
    round trip); then onto it."""
    clock.advance(deadline - 0.001)
    rt.statistics()
    assert not future.done()
    clock.advance(0.001)


def test_a_deadline_cancels_an_async_callback_in_flight(runtime: Start) -> None:
    """At its deadline a run fails AGENT_DEADLINE; its async model is cancelled; nothing commits."""
    model = _Hanging()
    clock = ManualClock()
    rt = runtime(
        agents={"default": lambda: new_agent_options(model), "echo": echo_agent}, clock=clock
    )
    future = rt.session("s").run("x", deadline=60)
    assert model.entered.wait(TIMEOUT)
    _runs_until(rt, clock, future, 60)
    assert error_code(future) == "AGENT_DEADLINE"
    assert model.cancelled.wait(TIMEOUT)
    assert rt.session("s").history() == []
    assert rt.session("s", agent="echo").run("next").get(timeout=TIMEOUT).output == "next"


def test_a_deadline_fails_a_run_whose_sync_callback_still_runs(runtime: Start) -> None:
    """A sync model past the deadline cannot be stopped, but the run fails at the deadline."""
    gate = Gate()
    clock = ManualClock()
    rt = runtime(agents={"default": gate.agent, "echo": echo_agent}, clock=clock)
    future = rt.session("s").run("x", deadline=60)
    gate.entered(1)
    _runs_until(rt, clock, future, 60)
    assert error_code(future) == "AGENT_DEADLINE"
    assert gate.calls == 1  # still inside the model
    gate.release()  # its late answer is discarded
    assert rt.session("s", agent="echo").run("next").get(timeout=TIMEOUT).output == "next"
    assert [m.content for m in rt.session("s").history()] == ["next", "next"]


def test_a_queued_run_fails_at_its_deadline_without_waiting_its_turn(runtime: Start) -> None:
    """A run queued behind a blocked one fails AGENT_DEADLINE at its deadline, still queued."""
    gate = Gate()
    clock = ManualClock()
    rt = runtime(agents={"default": gate.agent}, clock=clock)
    first = rt.session("s").run("first")
    gate.entered(1)
    second = rt.session("s").run("second", deadline=60)
    _queued(rt, "s", 1)
    _runs_until(rt, clock, second, 60)
    assert error_code(second) == "AGENT_DEADLINE"
    assert not first.done()
    gate.release()
    assert first.get(timeout=TIMEOUT).output == "first!"


def test_wait_for_timing_out_cancels_the_run() -> None:
    """asyncio.wait_for(handle.arun(...)) timing out cancels the run: nothing is committed."""
    model = _Hanging()

    async def main() -> None:
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", lambda: new_agent_options(model))
            handle = rt.session("s")
            try:
                await asyncio.wait_for(handle.arun("x"), 0.05)
            except TimeoutError:
                pass
            else:
                raise AssertionError("the run should not have completed")
            assert model.cancelled.is_set()
            stats = rt.statistics()
            assert stats.runs_failed == 1 and stats.runs_pending == 0
            assert await handle.ahistory() == []

    asyncio.run(main())


def test_cancelling_the_awaiting_task_fails_the_run_cancelled(runtime: Start) -> None:
    """Cancelling a task awaiting arun() cancels the model in flight; the run fails cancelled."""
    model = _Hanging()
    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    events: list[str] = []
    rt.events.subscribe(lambda e: events.append(e.data.get("code", e.type)), pattern="run.failed")

    async def main() -> None:
        task = asyncio.ensure_future(rt.session("s").arun("x"))
        # The model runs on the runtime's own loop: wait for it from a helper thread.
        assert await asyncio.to_thread(model.entered.wait, TIMEOUT)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert model.cancelled.wait(TIMEOUT)
    eventually(lambda: events == ["AGENT_CANCELLED"])
    assert rt.statistics().runs_pending == 0
    assert rt.session("s").history() == []


def test_deadlines_of_sessions_on_scheduler_threads_run_on_the_clock(runtime: Start) -> None:
    """A session on a scheduler thread arms its deadlines on the runtime's clock too."""
    gate = Gate()
    clock = ManualClock()
    rt = runtime(agents={"default": gate.agent}, clock=clock, scheduler_threads=1)
    first = rt.session("s").run("first")
    gate.entered(1)
    second = rt.session("s").run("second", deadline=60)
    _queued(rt, "s", 1)
    _runs_until(rt, clock, second, 60)
    assert error_code(second) == "AGENT_DEADLINE"
    gate.release()
    assert first.get(timeout=TIMEOUT).output == "first!"
