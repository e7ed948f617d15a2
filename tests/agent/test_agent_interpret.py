"""The effect interpreter: what each effect asks a driver for, decided in one place."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from praxo_actors.agent import (
    AgentError,
    AgentRun,
    BeginStep,
    CallModel,
    CallRepairer,
    CallSummarizer,
    CallTool,
    Emit,
    ListJournal,
    ModelContext,
    Tool,
    ToolContext,
    ToolError,
    ToolRetry,
    model_context,
    new_agent_options,
    run_agent,
    tool_context,
)
from praxo_actors.agent._drivers import _adrive, _drive
from praxo_actors.agent._interpret import (
    INTERRUPTED,
    LIVE,
    Call,
    Reply,
    call_async,
    call_now,
    decide,
    outcome,
)
from praxo_actors.models import (
    Event,
    Message,
    Request,
    Response,
    ToolCall,
    message_assistant,
    message_user,
    session,
)

EVENT = Event("run.started", "r", "s", 0, 0, {})
CONTEXT = ToolContext("r", "s", "c1", "r:1:0")
REQUEST = Request([message_user("hi")], [], "r", "s", 1)


def _tool(handler: Any = None, delivery: str = "at_least_once") -> Tool:
    return Tool("add", "", {}, handler or (lambda args: args["a"]), delivery=delivery)  # type: ignore[arg-type]


def _call_tool(tool: Tool | None = None) -> CallTool:
    return CallTool(tool or _tool(), {"a": 1}, ToolCall("add", {"a": 1}, id="c1"), CONTEXT)


def _call_model(context: ModelContext | None = None) -> CallModel:
    return CallModel(lambda request: request, REQUEST, context)


class Scripted:
    """A replayer answering from a list of replies (LIVE once they run out)."""

    def __init__(self, replies: list[Any], replaying: bool = True) -> None:
        self.replies = replies
        self.replaying = replaying
        self.lived: list[Any] = []

    def next_reply(self, effect: Any) -> Any:
        return self.replies.pop(0) if self.replies else LIVE

    def emitted(self, event: Event) -> Event | None:
        return None if self.replaying else event

    def live_context(self, effect: Any, context: Any) -> Any:
        self.lived.append(effect)
        return context

    def interrupted(self) -> ToolError:
        return ToolError("TOOL_INTERRUPTED", "cut off")


def test_begin_step_is_answered_at_once_with_the_stop_code() -> None:
    """A BeginStep's reply is None, or the code its driver's stop check gives."""
    plain = decide(BeginStep(1))
    assert type(plain) is Reply and plain.value is None and not plain.record
    stopped = decide(BeginStep(2), stop=lambda: "AGENT_CANCELLED")
    assert type(stopped) is Reply and stopped.value == "AGENT_CANCELLED"


def test_emit_is_published_unless_the_journal_replays_it() -> None:
    """An Emit is delivered to its sink; while a journal replays, it was delivered already."""
    sink: list[Event] = []
    step = decide(Emit(sink.append, EVENT))
    assert type(step) is Emit and step.sink == sink.append and step.event is EVENT
    replayed = decide(Emit(sink.append, EVENT), Scripted([]))
    assert type(replayed) is Reply and replayed.value is None
    live = decide(Emit(sink.append, EVENT), Scripted([], replaying=False))
    assert type(live) is Emit and live.event is EVENT


def test_a_tool_call_sets_its_context_and_journals_per_delivery() -> None:
    """A tool is called with its arguments and context; journaled, at_most_once marks first."""
    effect = _call_tool()
    step = decide(effect)
    assert type(step) is Call and step.fn is effect.tool.handler
    assert step.args == ({"a": 1},) and step.value is CONTEXT
    assert not step.started and not step.journaled and step.settle is None
    journal = Scripted([], replaying=False)
    once = decide(_call_tool(_tool(delivery="at_most_once")), journal)
    assert type(once) is Call and once.started and once.journaled
    least = decide(_call_tool(), journal)
    assert type(least) is Call and not least.started and least.journaled
    assert len(journal.lived) == 2  # the journal saw each call go live


def test_a_model_call_sets_its_context_and_reroutes_deltas() -> None:
    """A model call sets its model context (settled after, by an async driver); deltas go
    where the driver says."""
    emitted: list[tuple[str, dict[str, Any]]] = []

    def event(kind: str, data: dict[str, Any]) -> Emit:
        emitted.append((kind, data))
        return Emit(print, EVENT)

    context = ModelContext("r", "s", 1, event)
    step = decide(_call_model(context))
    assert type(step) is Call and step.value is context and step.settle is context
    published: list[Event] = []
    rerouted = decide(_call_model(context), deltas=published.append)
    assert type(rerouted) is Call and rerouted.value is not context
    rerouted.value.delta("he")
    assert len(published) == 1 and emitted == [("model.delta", {"step": 1, "text": "he"})]


def test_repairer_and_summarizer_calls_take_their_arguments() -> None:
    """A repairer gets the text and its errors, a summariser the messages; no context."""
    repair = decide(CallRepairer(lambda text, errors: text, "x", []))
    assert type(repair) is Call and repair.args == ("x", []) and repair.var is None
    messages = [Message(role="user", content="a")]
    summary = decide(CallSummarizer(lambda ms: "s", messages))
    assert type(summary) is Call and summary.args == (messages,) and summary.var is None


def test_a_replaying_journal_answers_calls_and_marks_an_interrupted_one() -> None:
    """A journal's reply answers the call; an at_most_once call cut off is answered with its
    interrupted result, to be journaled first; once replayed, calls are made live."""
    reply = Response(message_assistant("hi"))
    journal = Scripted([reply, INTERRUPTED])
    answered = decide(_call_model(), journal)
    assert type(answered) is Reply and answered.value is reply and not answered.record
    cut = decide(_call_tool(_tool(delivery="at_most_once")), journal)
    assert type(cut) is Reply and cut.record and isinstance(cut.value, ToolError)
    assert cut.value.code == "TOOL_INTERRUPTED"
    live = decide(_call_tool(), journal)
    assert type(live) is Call and live.journaled


def test_a_raised_tool_retry_is_journaled_as_its_result() -> None:
    """A tool's ToolRetry becomes ToolError("TOOL_RETRY"); other outcomes stay as they are."""
    ok, value = outcome(_call_tool(), False, ToolRetry("again"))
    assert ok and isinstance(value, ToolError) and value.code == "TOOL_RETRY"
    assert value.message == "again"
    error = ToolRetry("not a tool's")
    assert outcome(_call_model(), False, error) == (False, error)
    boom = ValueError("boom")
    assert outcome(_call_tool(), False, boom) == (False, boom)
    assert outcome(_call_tool(), True, 3) == (True, 3)


def test_an_unknown_effect_is_refused_with_a_code() -> None:
    """What is not an Effect fails with AGENT_UNKNOWN_EFFECT, not a hang or a bare TypeError."""
    with pytest.raises(AgentError) as info:
        decide(object())  # type: ignore[arg-type]
    assert info.value.code == "AGENT_UNKNOWN_EFFECT"


def _strange_run() -> AgentRun:
    def machine() -> Any:
        yield object()  # what no driver performs

    return AgentRun(machine(), "r")  # type: ignore[arg-type]


def test_the_drivers_refuse_an_unknown_effect_with_a_code() -> None:
    """run_agent's and arun_agent's drivers fail with AGENT_UNKNOWN_EFFECT."""
    with pytest.raises(AgentError) as sync:
        _drive(_strange_run())
    assert sync.value.code == "AGENT_UNKNOWN_EFFECT"
    with pytest.raises(AgentError) as asynchronous:
        asyncio.run(_adrive(_strange_run()))
    assert asynchronous.value.code == "AGENT_UNKNOWN_EFFECT"


def test_call_now_sets_the_context_and_refuses_a_coroutine() -> None:
    """A sync call sees its context while it runs; an async callback is refused (and closed)."""
    seen: list[Any] = []
    step = decide(_call_tool(_tool(lambda args: seen.append(tool_context()))))
    assert type(step) is Call
    call_now(step)
    assert seen == [CONTEXT] and tool_context() is None

    async def handler(args: dict[str, Any]) -> int:
        return 1

    coroutine = decide(_call_tool(_tool(handler)))
    assert type(coroutine) is Call
    with pytest.raises(TypeError, match="needs arun_agent"):
        call_now(coroutine)


def test_call_async_awaits_with_the_context_current_and_settles() -> None:
    """An async call sees its context until its reply is awaited; a model's deltas settle."""
    seen: list[Any] = []

    async def handler(args: dict[str, Any]) -> int:
        await asyncio.sleep(0)
        seen.append(tool_context())
        return 7

    step = decide(_call_tool(_tool(handler)))
    assert type(step) is Call
    assert asyncio.run(call_async(step)) == 7 and seen == [CONTEXT]
    models: list[Any] = []
    model_step = decide(
        CallModel(
            lambda request: models.append(model_context()) or Response(message_assistant("")),
            REQUEST,
            ModelContext("r", "s", 1),
        )
    )
    assert type(model_step) is Call
    assert isinstance(asyncio.run(call_async(model_step)), Response)
    assert len(models) == 1 and models[0] is model_step.value


def test_a_journaled_run_refuses_an_async_sink_like_run_agent() -> None:
    """run_agent(journal=...) with an async sink raises TypeError as run_agent does, instead of
    handing the run a coroutine that is never awaited."""

    async def sink(event: Event) -> None:
        return None

    options = new_agent_options(
        lambda request: Response(message_assistant("hi")),
        sink=sink,  # type: ignore[arg-type]
    )
    with pytest.raises(TypeError, match="needs arun_agent"):
        run_agent(options, session("s"), "x")
    with pytest.raises(TypeError, match="needs arun_agent"):
        run_agent(options, session("s"), "x", journal=ListJournal())


def test_deltas_change_nothing_for_a_model_without_a_sink_or_a_tool() -> None:
    """Given a delta channel, a model call whose context has no sink keeps its context (no
    copy is made), and a tool call is decided as without one."""
    published: list[Event] = []
    context = ModelContext("r", "s", 1)
    step = decide(_call_model(context), deltas=published.append)
    assert type(step) is Call and step.value is context and step.settle is context
    assert not step.journaled and not step.started
    effect = _call_tool()
    assert decide(effect, deltas=published.append) == decide(effect)
    step.value.delta("he")  # no sink: nothing to publish
    assert published == []
