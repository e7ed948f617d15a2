"""Events a run emits to its sink: order, numbering, payloads and failure reporting."""

from __future__ import annotations

from typing import Any

import pytest
from _helpers import say

from praxo_actors.agent import AgentError, Tool, new_agent_options, run_agent
from praxo_actors.models import (
    Event,
    ModelError,
    Request,
    Response,
    ToolCall,
    session,
)

ECHO = Tool("echo", "", {}, lambda a: {"echo": a.get("text")})


def test_completed_run_event_sequence(scripted: Any, events: Any) -> None:
    """A run with one tool call emits its events in order with seq counting from 0."""
    model = scripted(say("", ToolCall("echo", {"text": "hi"}, id="c1")), say("done"))
    result = run_agent(new_agent_options(model, tools=[ECHO], sink=events), session("s"), "go")
    assert events.types() == [
        "run.started",
        "model.requested",
        "model.responded",
        "tool.started",
        "tool.completed",
        "model.requested",
        "model.responded",
        "run.completed",
    ]
    assert [e.seq for e in events] == list(range(8))
    assert {e.run_id for e in events} == {result.run_id}
    assert {e.session_id for e in events} == {"s"}
    assert all(isinstance(e, Event) and e.time_ns > 0 for e in events)


def test_event_payloads(scripted: Any, events: Any) -> None:
    """Events carry the input, the step, the tool call, its output and the run's totals."""
    model = scripted(say("", ToolCall("echo", {"text": "hi"}, id="c1")), say("done"))
    run_agent(new_agent_options(model, tools=[ECHO], sink=events), session("s"), "go")
    started, requested, responded, tool_started, tool_completed = events[:5]
    assert started.data == {"input": "go"}
    assert requested.data == {"step": 1, "messages": 1, "tools": ["echo"]}
    assert responded.data["step"] == 1 and responded.data["tool_calls"] == 1
    assert responded.data["attempts"] == 1
    assert tool_started.data == {
        "step": 1,
        "name": "echo",
        "id": "c1",
        "arguments": {"text": "hi"},
    }
    assert tool_completed.data == {
        "step": 1,
        "name": "echo",
        "id": "c1",
        "output": '{"echo":"hi"}',
        "error": None,
    }
    assert events[-1].data == {"output": "done", "steps": 2, "model_calls": 2, "tool_calls": 1}


def test_failed_run_ends_with_one_run_failed(scripted: Any, events: Any) -> None:
    """A failed run emits run.failed with the code as its last event and no run.completed."""
    options = new_agent_options(scripted(ModelError("DOWN", "no")), sink=events)
    with pytest.raises(AgentError):
        run_agent(options, session("s"), "x")
    assert events.types() == ["run.started", "model.requested", "run.failed"]
    assert events[-1].data == {"code": "DOWN", "message": "no"}


def test_callback_exception_emits_run_failed_then_raises(events: Any) -> None:
    """A model exception emits run.failed with AGENT_CALLBACK_EXCEPTION and is re-raised."""

    def model(request: Request) -> Response:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        run_agent(new_agent_options(model, sink=events), session("s"), "x")
    assert events.types()[-1] == "run.failed"
    assert events[-1].data["code"] == "AGENT_CALLBACK_EXCEPTION"
    assert "ValueError" in events[-1].data["message"]


def test_tool_exception_emits_run_failed(scripted: Any, events: Any) -> None:
    """A tool exception emits tool.started, then run.failed with AGENT_CALLBACK_EXCEPTION."""

    def handler(arguments: dict[str, Any]) -> Any:
        raise OSError("disk")

    model = scripted(say("", ToolCall("t", {})))
    options = new_agent_options(model, tools=[Tool("t", "", {}, handler)], sink=events)
    with pytest.raises(OSError):
        run_agent(options, session("s"), "x")
    assert events.types()[-2:] == ["tool.started", "run.failed"]
    assert events[-1].data["code"] == "AGENT_CALLBACK_EXCEPTION"


def test_malformed_model_return_emits_run_failed(scripted: Any, events: Any) -> None:
    """A model returning garbage emits run.failed with AGENT_CALLBACK_EXCEPTION before TypeError."""
    with pytest.raises(TypeError):
        run_agent(new_agent_options(scripted("text"), sink=events), session("s"), "x")
    assert events[-1].type == "run.failed"
    assert events[-1].data["code"] == "AGENT_CALLBACK_EXCEPTION"


def test_sink_exception_propagates_without_further_events(scripted: Any) -> None:
    """An exception raised by the sink propagates unchanged and no later event is delivered."""
    seen: list[str] = []
    boom = RuntimeError("sink")

    def sink(event: Event) -> None:
        seen.append(event.type)
        if event.type == "model.requested":
            raise boom

    model = scripted(say("never"))
    with pytest.raises(RuntimeError) as info:
        run_agent(new_agent_options(model, sink=sink), session("s"), "x")
    assert info.value is boom
    assert seen == ["run.started", "model.requested"]
    assert model.requests == []


def test_sink_failing_on_run_failed_propagates_its_own_exception(scripted: Any) -> None:
    """A sink that raises while receiving run.failed propagates its exception, not the code."""

    def sink(event: Event) -> None:
        if event.type == "run.failed":
            raise LookupError("sink down")

    with pytest.raises(LookupError):
        run_agent(new_agent_options(scripted(ModelError("X")), sink=sink), session("s"), "x")


def test_tool_error_reports_code_in_tool_completed(scripted: Any, events: Any) -> None:
    """tool.completed names the ToolError's code in its data."""
    from praxo_actors.agent import ToolError

    tool = Tool("t", "", {}, lambda a: ToolError("BAD", "b"))
    model = scripted(say("", ToolCall("t", {})), say("ok"))
    run_agent(new_agent_options(model, tools=[tool], sink=events), session("s"), "x")
    completed = next(e for e in events if e.type == "tool.completed")
    assert completed.data["error"] == "BAD"


def test_no_sink_means_no_events_and_same_result(scripted: Any, events: Any) -> None:
    """A run without a sink gives the same result as one with a sink."""
    with_sink = run_agent(
        new_agent_options(scripted(say("a")), sink=events), session("s"), "x", run_id="r"
    )
    without = run_agent(new_agent_options(scripted(say("a"))), session("s"), "x", run_id="r")
    assert with_sink == without
