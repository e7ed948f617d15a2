"""The sans-IO protocol: a third driver written here performs each effect by hand."""

from __future__ import annotations

from typing import Any

import pytest
from _helpers import say

from praxo_actors.agent import (
    AgentError,
    AgentRun,
    BeginStep,
    CallModel,
    CallRepairer,
    CallSummarizer,
    CallTool,
    Emit,
    Tool,
    fallback_model,
    new_agent_options,
    start_run,
)
from praxo_actors.middleware import compaction, structured_output
from praxo_actors.models import (
    ModelError,
    Response,
    Session,
    ToolCall,
    message_assistant,
    session,
)


def unused_model(request: Any) -> Response:
    raise AssertionError("the hand driver answers model calls itself")


def test_run_yields_effects_and_takes_replies() -> None:
    """Without a sink the run yields BeginStep, CallModel, CallTool and completes on the replies."""
    tool = Tool("t", "", {}, lambda a: "unused")
    run = start_run(new_agent_options(unused_model, tools=[tool]), session("s"), "hi", run_id="r1")
    assert isinstance(run, AgentRun) and run.run_id == "r1" and not run.done
    assert run.effect == BeginStep(1)
    effect = run.send(None)
    assert isinstance(effect, CallModel) and effect.model is unused_model
    assert effect.request.step == 1 and effect.request.run_id == "r1"
    call = ToolCall("t", {"a": [1]}, id="x")
    effect = run.send(say("", call))
    assert isinstance(effect, CallTool) and effect.tool is tool
    assert effect.call is call and effect.arguments == {"a": [1]}
    assert effect.arguments is not call.arguments
    assert effect.arguments["a"] is not call.arguments["a"]
    assert run.send("tool result") == BeginStep(2)
    assert isinstance(run.send(None), CallModel)
    assert run.send(say("bye")) is None
    assert run.done
    assert run.result.output == "bye" and run.result.run_id == "r1"
    assert run.result.session.messages[2].content == '"tool result"'


def test_emit_effects_carry_sink_and_event() -> None:
    """With a sink, events come out as Emit effects the driver delivers."""
    sink_calls: list[Any] = []
    run = start_run(
        new_agent_options(unused_model, sink=sink_calls.append),
        session("s"),
        "hi",
        clock=lambda: 42,
    )
    effect = run.effect
    assert isinstance(effect, Emit) and effect.sink == sink_calls.append
    assert effect.event.type == "run.started" and effect.event.time_ns == 42
    assert effect.event.seq == 0


def test_result_before_completion_raises() -> None:
    """Reading the result of an unfinished run raises RuntimeError."""
    run = start_run(new_agent_options(unused_model), session("s"), "x")
    with pytest.raises(RuntimeError):
        _ = run.result


@pytest.mark.parametrize("code", ["AGENT_CANCELLED", "AGENT_DEADLINE"])
def test_begin_step_reply_fails_the_run_with_that_code(code: str) -> None:
    """A code sent in reply to BeginStep fails the run with that code after run.failed."""
    seen: list[Any] = []
    run = start_run(new_agent_options(unused_model, sink=seen.append), session("s"), "x")
    effect = run.effect
    while not isinstance(effect, BeginStep):
        assert isinstance(effect, Emit)
        effect.sink(effect.event)
        effect = run.send(None)
    effect = run.send(code)
    assert isinstance(effect, Emit) and effect.event.type == "run.failed"
    assert effect.event.data["code"] == code
    with pytest.raises(AgentError) as info:
        run.send(None)
    assert info.value.code == code and info.value.run_id == run.run_id
    assert run.done


def test_cancel_between_steps_stops_before_the_next_model_call() -> None:
    """A cancel answered at the second BeginStep ends the run before a second CallModel."""
    run = start_run(
        new_agent_options(unused_model, tools=[Tool("t", "", {}, lambda a: 1)]), session("s"), "x"
    )
    assert isinstance(run.send(None), CallModel)
    assert isinstance(run.send(say("", ToolCall("t", {}))), CallTool)
    assert run.send(1) == BeginStep(2)
    with pytest.raises(AgentError) as info:
        run.send("AGENT_CANCELLED")
    assert info.value.code == "AGENT_CANCELLED"


def test_thrown_exception_is_reraised_unchanged() -> None:
    """An exception thrown into the run at a callback comes back out as the same object."""
    run = start_run(new_agent_options(unused_model), session("s"), "x")
    run.send(None)
    boom = ZeroDivisionError("x")
    with pytest.raises(ZeroDivisionError) as info:
        run.throw(boom)
    assert info.value is boom and run.done


def test_fallback_yields_one_call_model_per_attempt() -> None:
    """A fallback model yields CallModel for each child in turn until one answers."""

    def a(r: Any) -> Any:
        return None

    def b(r: Any) -> Any:
        return None

    def c(r: Any) -> Any:
        return None

    model = fallback_model(fallback_model(a, b), c)
    run = start_run(new_agent_options(model), session("s"), "x")
    first = run.send(None)
    assert isinstance(first, CallModel) and first.model is a
    second = run.send(ModelError("A"))
    assert isinstance(second, CallModel) and second.model is b
    assert second.request is first.request
    third = run.send(ModelError("B"))
    assert isinstance(third, CallModel) and third.model is c
    assert run.send(say("ok")) is None
    assert run.result.model_calls == 1


def test_repairer_and_summarizer_are_effects() -> None:
    """Structured-output repairs and compaction summaries are requested as effects."""

    def repairer(text: str, errors: list[Any]) -> str:
        return text

    def summarizer(messages: list[Any]) -> str:
        return "s"

    options = new_agent_options(
        unused_model,
        structured_output=structured_output({"type": "object"}, 1, repairer),
        compaction=compaction(1, keep_last=1, summarizer=summarizer),
    )
    history = Session(id="s", messages=[message_assistant("old " * 20)])
    run = start_run(options, history, "x")
    effect = run.send(None)
    assert isinstance(effect, CallSummarizer) and effect.summarizer is summarizer
    assert [m.content for m in effect.messages] == ["old " * 20]
    assert isinstance(run.send("earlier"), CallModel)
    effect = run.send(say("not json"))
    assert isinstance(effect, CallRepairer) and effect.repairer is repairer
    assert effect.text == "not json" and [e.keyword for e in effect.errors] == ["json"]
    assert run.send('{"ok": true}') is None
    assert run.result.structured == {"ok": True}


def test_close_abandons_the_run() -> None:
    """Closing a run ends it without a result."""
    run = start_run(new_agent_options(unused_model), session("s"), "x")
    run.close()
    assert run.done
    with pytest.raises(RuntimeError):
        _ = run.result
