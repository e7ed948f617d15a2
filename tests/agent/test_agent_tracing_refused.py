"""Tool calls refused before any handler ran still get their ``execute_tool`` span."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _otel import Recorded
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from praxo_actors.agent import (
    AgentError,
    AgentOptions,
    BeginStep,
    CallModel,
    CallTool,
    Emit,
    Tool,
    new_agent_options,
    resume_agent,
    run_agent,
    start_run,
)
from praxo_actors.middleware import call_limit, require_approval, tool_selection
from praxo_actors.models import Response, ToolCall, message_assistant, session
from praxo_actors.testing import ScriptedModel

ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """Return in-memory providers, shut down after the test."""
    recorded = Recorded()
    yield recorded
    recorded.shutdown()


class Adder:
    """An ``add`` tool that counts its calls."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, arguments: dict[str, Any]) -> Any:
        self.calls.append(arguments)
        return {"sum": arguments["a"] + arguments["b"]}

    def tool(self) -> Tool:
        return Tool("add", "Add two numbers.", ADD_SCHEMA, self)


def options(otel: Recorded | None, replies: list[Any], adder: Adder, **kw: Any) -> AgentOptions:
    provider = None if otel is None else otel.tracer_provider
    return new_agent_options(
        ScriptedModel(replies), tools=[adder.tool()], tracer_provider=provider, **kw
    )


def tool_spans(otel: Recorded) -> list[ReadableSpan]:
    return [s for s in otel.spans() if s.name.startswith("execute_tool")]


def assert_refused(span: ReadableSpan, run: ReadableSpan, code: str, call_id: str) -> None:
    assert span.name == "execute_tool add"
    assert span.attributes is not None
    assert span.attributes["error.type"] == code
    assert span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert span.attributes["gen_ai.tool.name"] == "add"
    assert span.attributes["gen_ai.tool.call.id"] == call_id
    assert span.attributes["gen_ai.conversation.id"] == "s"  # the session of every run here
    assert span.status.status_code is StatusCode.ERROR
    assert span.parent is not None and span.parent.span_id == run.context.span_id


def test_a_call_refused_for_its_arguments_has_a_failed_span(otel: Recorded) -> None:
    """The refused call's span says TOOL_CALL_INVALID_ARGUMENTS; the next call's succeeds."""
    adder = Adder()
    replies = [
        ToolCall("add", {"a": "two", "b": 3}, id="c1"),
        ToolCall("add", {"a": 2, "b": 3}, id="c2"),
        "5",
    ]
    result = run_agent(options(otel, replies, adder, name="calc"), session("s"), "2+3?")
    assert result.output == "5" and adder.calls == [{"a": 2, "b": 3}]
    refused, ran = tool_spans(otel)
    run = otel.span("invoke_agent calc")
    assert_refused(refused, run, "TOOL_CALL_INVALID_ARGUMENTS", "c1")
    assert "/a" in (refused.status.description or "")
    assert ran.attributes is not None and "error.type" not in ran.attributes
    assert ran.status.status_code is StatusCode.UNSET
    assert run.status.status_code is StatusCode.UNSET


@pytest.mark.parametrize(
    ("settings", "code"),
    [
        ({"tool_selection": tool_selection(["other"])}, "AGENT_TOOL_NOT_SELECTED"),
        ({"call_limit": call_limit(0, 1)}, "AGENT_TOOL_CALL_LIMIT"),
    ],
)
def test_a_call_that_fails_the_run_has_a_failed_span(
    otel: Recorded, settings: dict[str, Any], code: str
) -> None:
    """A call not selected, or over the tool budget, fails its run and its span alike."""
    adder = Adder()
    calls = [ToolCall("add", {"a": 1, "b": 1}, id="c1"), ToolCall("add", {"a": 2, "b": 2}, id="c2")]
    replies = [Response(message_assistant("", calls)), "done"]
    with pytest.raises(AgentError) as failed:
        run_agent(options(otel, replies, adder, name="calc", **settings), session("s"), "go")
    assert failed.value.code == code
    run = otel.span("invoke_agent calc")
    assert run.attributes is not None and run.attributes["error.type"] == code
    spans = tool_spans(otel)
    assert_refused(spans[-1], run, code, "c1" if code == "AGENT_TOOL_NOT_SELECTED" else "c2")
    assert len(spans) == len(adder.calls) + 1


def test_a_call_to_an_unknown_tool_has_a_failed_span(otel: Recorded) -> None:
    """A call naming no tool is refused with TOOL_NOT_FOUND, on its span too."""
    replies = [ToolCall("subtract", {"a": 1}, id="c1"), "done"]
    with pytest.raises(AgentError):
        run_agent(options(otel, replies, Adder(), name="calc"), session("s"), "go")
    (span,) = tool_spans(otel)
    assert span.name == "execute_tool subtract"
    assert span.attributes is not None and span.attributes["error.type"] == "TOOL_NOT_FOUND"


def test_a_denied_call_has_a_failed_span(otel: Recorded) -> None:
    """A call a person denied on resume is refused with APPROVAL_DENIED, on its span too."""
    adder = Adder()
    replies = [ToolCall("add", {"a": 1, "b": 1}, id="c1"), "fine"]
    opts = options(otel, replies, adder, name="calc", approval=require_approval(["add"]))
    interrupted = run_agent(opts, session("s"), "go")
    assert interrupted.status == "interrupted"
    result = resume_agent(opts, interrupted.session, {"approved": False})
    assert result.output == "fine" and adder.calls == []
    (span,) = tool_spans(otel)
    assert span.attributes is not None and span.attributes["error.type"] == "APPROVAL_DENIED"
    assert span.status.status_code is StatusCode.ERROR


def test_an_untraced_run_yields_only_the_effects_drivers_perform() -> None:
    """Without a provider, a refused call asks nothing of the driver: no new kind of effect."""
    replies = [ToolCall("add", {"a": "two", "b": 3}, id="c1"), "done"]
    run = start_run(options(None, replies, Adder()), session("s"), "go")
    seen = []
    effect = run.effect
    while effect is not None:
        seen.append(type(effect))
        if isinstance(effect, CallModel):
            effect = run.send(effect.model(effect.request))
        else:
            effect = run.send(None)
    assert set(seen) <= {BeginStep, CallModel, CallTool, Emit}
    assert CallTool not in seen and run.result.output == "done"
