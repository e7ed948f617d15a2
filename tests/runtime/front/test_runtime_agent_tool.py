"""Agents as tools: ``agent_tool`` runs a registered agent on a child session of the runtime."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest
from _runtime_helpers import TIMEOUT, caller, contents, echo_agent

from praxo_actors import AgentError, PraxoError
from praxo_actors.agent import model_context, new_agent_options
from praxo_actors.memory import InMemoryStore
from praxo_actors.models import ModelError, Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime, agent_tool
from praxo_actors.testing import EventRecorder

Start = Callable[..., Runtime]


class Latch:
    """An async model that answers its input once released, signalling that it entered."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.cancelled = threading.Event()
        self.calls = 0
        self._release: Callable[[], None] | None = None

    async def __call__(self, request: Request) -> Response:
        self.calls += 1
        loop, opened = asyncio.get_running_loop(), asyncio.Event()
        self._release = lambda: loop.call_soon_threadsafe(opened.set)
        self.entered.set()
        try:
            await opened.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return Response(message_assistant(f"latched {request.messages[-1].content}"))

    def release(self) -> None:
        assert self._release is not None
        self._release()


def test_a_call_runs_the_agent_on_a_child_session_and_answers_its_output(runtime: Start) -> None:
    """The child's output is the call's result; the child keeps its own history; its events
    carry the caller's session as ``parent_session``."""
    rt = runtime()
    rt.register_agent("helper", echo_agent)
    rt.register_agent("boss", caller("helper"))
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="*", session_id="s/helper")
    result = rt.session("s", "boss").run("hi").get(timeout=TIMEOUT)
    assert result.output == "told: sub hi"
    assert contents(rt.session("s/helper", "helper").history()) == ["sub hi", "sub hi"]
    recorder.wait_for("run.completed", TIMEOUT)
    assert recorder.events and all(e.data["parent_session"] == "s" for e in recorder.events)


def test_a_childs_failure_is_the_calls_tool_error(runtime: Start) -> None:
    """A child failing with a code gives the model ToolError(<that code>); the caller goes on."""
    rt = runtime()
    rt.register_agent("helper", lambda: new_agent_options(lambda _r: ModelError("MODEL_DOWN")))
    rt.register_agent("boss", caller("helper", name="ask", session="{session_id}:{call_id}"))
    # name "ask" is not registered: the tool runs agent "helper" under that name.
    result = rt.session("s", "boss").run("hi").get(timeout=TIMEOUT)
    assert "MODEL_DOWN" in result.output
    assert rt.session("s:c1", "helper").history() == []


def test_nesting_beyond_max_depth_is_agent_depth(runtime: Start) -> None:
    """An agent that calls itself: the call past ``max_depth`` is ToolError AGENT_DEPTH."""
    rt = runtime()
    rt.register_agent("loop", caller("loop", max_depth=2))
    result = rt.session("s", "loop").run("x").get(timeout=TIMEOUT)
    assert result.output.startswith("told: told: told: {'error': {'code': 'AGENT_DEPTH'")
    assert rt.session("s/loop/loop", "loop").history()  # depth 2 ran
    assert rt.session("s/loop/loop/loop", "loop").history() == []  # depth 3 did not


def test_cancelling_the_caller_cancels_the_child(runtime: Start) -> None:
    """The caller's arun is cancelled while its child runs: the child is cancelled too."""
    latch = Latch()
    rt = runtime()
    rt.register_agent("helper", lambda: new_agent_options(latch))
    rt.register_agent("boss", caller("helper"))

    async def main() -> None:
        task = asyncio.create_task(rt.session("s", "boss").arun("hi"))
        assert await asyncio.to_thread(latch.entered.wait, TIMEOUT)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert latch.cancelled.wait(TIMEOUT)


def test_a_callers_deadline_reaches_the_child(runtime: Start) -> None:
    """At the caller's deadline the child in flight is cancelled and the caller fails."""
    latch = Latch()
    rt = runtime()
    rt.register_agent("helper", lambda: new_agent_options(latch))
    rt.register_agent("boss", caller("helper"))
    future = rt.session("s", "boss").run("hi", deadline=0.2)
    with pytest.raises(AgentError) as info:
        future.get(timeout=TIMEOUT)
    assert info.value.code == "AGENT_DEADLINE"
    assert latch.cancelled.wait(TIMEOUT)


def test_a_resumed_durable_caller_waits_for_the_same_child_run(runtime: Start) -> None:
    """The caller's session crashes while its child runs; resumed, the caller waits for that
    child run (the child's model is called once) and completes."""
    latch = Latch()
    store = InMemoryStore()
    rt = runtime(store=store)
    rt.register_agent("helper", lambda: new_agent_options(latch))
    rt.register_agent("boss", caller("helper"), durable=True)
    # Subscribed before the crash: the resumption may be published as soon as it happens.
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="run.resumed", session_id="s")
    handle = rt.session("s", "boss")
    future = handle.run("hi")
    assert latch.entered.wait(TIMEOUT)
    assert recorder.types() == []
    handle.crash_for_testing()
    # The resumed caller asks again: it must find the running child, not start one.
    recorder.wait_for("run.resumed", TIMEOUT)
    latch.release()
    assert future.get(timeout=TIMEOUT).output == "told: latched sub hi"  # once, not twice
    assert latch.calls == 1
    assert contents(rt.session("s/helper", "helper").history()) == ["sub hi", "latched sub hi"]
    store.close()


def test_agent_tool_checks_its_arguments() -> None:
    """Bad arguments are refused when the tool is made."""
    for kwargs in ({"max_depth": 0}, {"session": "{nope}"}, {"name": ""}):
        with pytest.raises(PraxoError) as info:
            agent_tool("helper", **kwargs)  # type: ignore[arg-type]
        assert info.value.code == "RUNTIME_INVALID_INPUT"


def test_outside_a_runtime_the_call_is_a_tool_error() -> None:
    """Called with no runtime run behind it, the handler answers AGENT_TOOL_CONTEXT."""
    tool = agent_tool("helper")
    answer = asyncio.run(tool.handler({"input": "x"}))
    assert answer.code == "AGENT_TOOL_CONTEXT"


def _sync_streaming_child(_request: Request) -> Response:
    context = model_context()
    assert context is not None
    context.delta("part")  # on an I/O thread: the parent comes with the run, not the kernel
    return Response(message_assistant("streamed"))


@pytest.mark.parametrize("threads", [None, 1])
def test_a_child_runs_deltas_name_its_caller_too(runtime: Start, threads: int | None) -> None:
    """A child run's ``model.delta`` events, sent from the thread its sync model runs on, carry
    ``parent_session`` as its other events do, with sessions on the loop or on a scheduler
    thread."""
    rt = runtime(scheduler_threads=threads)
    rt.register_agent("helper", lambda: new_agent_options(_sync_streaming_child))
    rt.register_agent("boss", caller("helper"))
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="*", session_id="s/helper")
    result = rt.session("s", "boss").run("hi").get(timeout=TIMEOUT)
    assert result.output == "told: streamed"
    recorder.wait_for("run.completed", TIMEOUT)
    deltas = [e for e in recorder.events if e.type == "model.delta"]
    assert [e.data["text"] for e in deltas] == ["part"]
    assert all(e.data["parent_session"] == "s" for e in recorder.events)


def test_a_call_back_into_the_callers_own_session_is_agent_cycle(runtime: Start) -> None:
    """An agent tool whose child session is the caller's own (``{session_id}``) answers
    ToolError AGENT_CYCLE at once instead of queueing behind the run that waits for it."""
    rt = runtime()
    rt.register_agent("helper", echo_agent)
    rt.register_agent("boss", caller("helper", session="{session_id}"))
    result = rt.session("s", "boss").run("hi").get(timeout=TIMEOUT)
    assert result.output.startswith("told: {'error': {'code': 'AGENT_CYCLE'")
    assert contents(rt.session("s", "boss").history())[0] == "hi"
    assert rt.statistics().runs_pending == 0


def test_a_cycle_of_fixed_sessions_is_agent_cycle(runtime: Start) -> None:
    """A on session A calls B on session B, which calls A on session A: that call is
    AGENT_CYCLE (B's run carries its chain of callers); both runs complete."""
    rt = runtime()
    rt.register_agent("a", caller("b", session="B"))
    rt.register_agent("b", caller("a", session="A"))
    result = rt.session("A", "a").run("hi").get(timeout=TIMEOUT)
    assert result.output.startswith("told: told: {'error': {'code': 'AGENT_CYCLE'")
    assert "'A -> B -> A'" not in result.output and "A -> B -> A" in result.output
    assert contents(rt.session("B", "b").history())[0] == "sub hi"
    assert rt.statistics().runs_pending == 0


def test_the_same_session_twice_outside_one_chain_is_no_cycle(runtime: Start) -> None:
    """Two sibling calls to one fixed child session run one after the other: no cycle."""

    def model(request: Request) -> Response:
        last = request.messages[-1]
        if last.role == "tool":
            return Response(message_assistant(f"got {last.content}"))
        calls = [ToolCall("helper", {"input": f"q{i}"}, id=f"c{i}") for i in (1, 2)]
        return Response(message_assistant("", calls))

    tool = agent_tool("helper", session="shared")
    rt = runtime()
    rt.register_agent("helper", echo_agent)
    rt.register_agent("boss", lambda: new_agent_options(model, tools=[tool]))
    assert rt.session("s", "boss").run("hi").get(timeout=TIMEOUT).output == "got q2"
    assert contents(rt.session("shared", "helper").history()) == ["q1", "q1", "q2", "q2"]
