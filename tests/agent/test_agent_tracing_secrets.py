"""Telemetry keeps secrets: PII redacted in keys and error messages, attribute values cut.

Every test runs the loop twice, under ``run_agent`` with sync callbacks and under ``arun_agent``
with ``async def`` ones.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _otel import Recorded
from opentelemetry.trace import StatusCode

from praxo_actors import PraxoError
from praxo_actors.agent import (
    AgentError,
    AgentOptions,
    Tool,
    ToolError,
    arun_agent,
    new_agent_options,
    run_agent,
)
from praxo_actors.models import (
    ModelError,
    Request,
    Response,
    RunResult,
    ToolCall,
    message_assistant,
    session,
)

EMAIL = "ada@example.com"
OTHER = "bob@example.org"
MARK = "[REDACTED_EMAIL]"

Drive = Callable[[AgentOptions, str], RunResult]


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """Return in-memory providers, shut down after the test."""
    recorded = Recorded()
    yield recorded
    recorded.shutdown()


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    """Run each test with sync callbacks under run_agent and async ones under arun_agent."""
    return str(request.param)


def drive(mode: str, options: AgentOptions, text: str, session_id: str = "s") -> RunResult:
    """Run ``options`` on ``text`` the way ``mode`` says."""
    if mode == "sync":
        return run_agent(options, session(session_id), text)
    return asyncio.run(arun_agent(options, session(session_id), text))


def callback(mode: str, function: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Return ``function`` itself, or under ``async`` an ``async def`` doing the same."""
    if mode == "sync":
        return function

    async def wrapped(argument: Any) -> Any:
        await asyncio.sleep(0)
        return function(argument)

    wrapped.__name__ = getattr(function, "__name__", "model")
    return wrapped


def script(mode: str, *replies: Any) -> Callable[[Request], Any]:
    """Return a model giving ``replies`` in order (as ``Response``s where they are text)."""
    queue = list(replies)

    def model(_request: Request) -> Any:
        reply = queue.pop(0)
        if isinstance(reply, str):
            return Response(message_assistant(reply))
        if isinstance(reply, ToolCall):
            return Response(message_assistant("", [reply]))
        return reply

    return callback(mode, model)


def recorded_text(otel: Recorded) -> str:
    """Return everything the providers recorded as one string: names, attributes, statuses,
    events and metric point attributes."""
    spans = [
        {
            "name": span.name,
            "attributes": dict(span.attributes or {}),
            "status": span.status.description,
            "events": [(e.name, dict(e.attributes or {})) for e in span.events],
        }
        for span in otel.spans()
    ]
    metrics = [dict(point.attributes) for points in otel.metrics().values() for point in points]
    return json.dumps({"spans": spans, "metrics": metrics})


def options(model: Any, otel: Recorded, **fields: Any) -> AgentOptions:
    """Return options with both in-memory providers."""
    return new_agent_options(
        model,
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        **fields,
    )


def test_captured_content_redacts_dict_keys(otel: Recorded, mode: str) -> None:
    """An e-mail used as a dict key is redacted in tool arguments, results and messages."""
    arguments = {EMAIL: "x", "nested": {OTHER: [{EMAIL: 1}]}}
    echo = Tool("echo", "", {}, callback(mode, lambda _a: {EMAIL: "seen", OTHER: "too"}))
    model = script(mode, ToolCall("echo", arguments, id="c1"), "done")
    drive(mode, options(model, otel, tools=[echo], capture_content=True), "go")
    assert EMAIL not in recorded_text(otel) and OTHER not in recorded_text(otel)
    tool = otel.span("execute_tool echo").attributes or {}
    assert json.loads(str(tool["gen_ai.tool.call.arguments"])) == {
        MARK: "x",
        "nested": {MARK: [{MARK: 1}]},
    }
    # Two keys redacted alike are both kept.
    assert json.loads(str(tool["gen_ai.tool.call.result"])) == {MARK: "seen", f"{MARK} #2": "too"}
    first_chat, _, second_chat = otel.spans()[:3]
    (reply,) = json.loads(str((first_chat.attributes or {})["gen_ai.output.messages"]))
    assert reply["parts"][0]["arguments"] == {MARK: "x", "nested": {MARK: [{MARK: 1}]}}
    history = json.loads(str((second_chat.attributes or {})["gen_ai.input.messages"]))
    assert history[1]["parts"][0]["arguments"][MARK] == "x"


@pytest.mark.parametrize("capture", [False, True])
def test_a_model_error_message_is_redacted_everywhere(
    otel: Recorded, mode: str, capture: bool
) -> None:
    """A ModelError's message reaches the chat and run spans redacted, content or not."""
    model = script(mode, ModelError("MODEL_REFUSED", f"no answer for {EMAIL}"))
    with pytest.raises(AgentError):
        drive(mode, options(model, otel, capture_content=capture), "hi")
    assert EMAIL not in recorded_text(otel)
    chat, run = otel.spans()
    for span in (chat, run):
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == f"no answer for {MARK}"
        assert (span.attributes or {})["error.type"] == "MODEL_REFUSED"
    (event,) = run.events  # the AgentError the run raised
    assert event.name == "exception"
    assert dict(event.attributes or {})["exception.message"] == f"no answer for {MARK}"


@pytest.mark.parametrize("capture", [False, True])
def test_a_tool_praxo_error_message_is_redacted_everywhere(
    otel: Recorded, mode: str, capture: bool
) -> None:
    """A PraxoError a tool raises reaches the tool and run spans, and their exception events,
    redacted, content or not."""

    def mail(_arguments: dict[str, Any]) -> Any:
        raise PraxoError("MAIL_FAILED", f"cannot mail {EMAIL}")

    tool = Tool("mail", "", {}, callback(mode, mail))
    model = script(mode, ToolCall("mail", {}, id="c1"))
    with pytest.raises(PraxoError) as info:
        drive(mode, options(model, otel, tools=[tool], capture_content=capture), "go")
    assert info.value.message == f"cannot mail {EMAIL}"  # the caller's exception is untouched
    assert EMAIL not in recorded_text(otel)
    for name in ("execute_tool mail", "invoke_agent"):
        span = otel.span(name)
        assert span.status.description == f"cannot mail {MARK}"
        (event,) = span.events
        attributes = dict(event.attributes or {})
        assert attributes["exception.type"] == "praxo_actors._errors.PraxoError"
        assert attributes["exception.message"] == f"cannot mail {MARK}"
        assert ("exception.stacktrace" in attributes) is capture


def test_a_tool_error_message_is_redacted(otel: Recorded, mode: str) -> None:
    """A ToolError's message is redacted on its span; the run goes on."""
    tool = Tool("refuse", "", {}, callback(mode, lambda _a: ToolError("NOPE", f"not {EMAIL}")))
    model = script(mode, ToolCall("refuse", {}, id="c"), "fine")
    drive(mode, options(model, otel, tools=[tool]), "go")
    assert EMAIL not in recorded_text(otel)
    assert otel.span("execute_tool refuse").status.description == f"not {MARK}"


@pytest.mark.parametrize("capture", [False, True])
def test_a_callback_exception_is_recorded_redacted(
    otel: Recorded, mode: str, capture: bool
) -> None:
    """A callback's own exception is an exception event whose message and stack trace are
    recorded only with capture_content, and then redacted."""

    def boom(_arguments: dict[str, Any]) -> Any:
        raise LookupError(f"no row for {EMAIL}")

    tool = Tool("boom", "", {}, callback(mode, boom))
    model = script(mode, ToolCall("boom", {}, id="c"))
    with pytest.raises(LookupError):
        drive(mode, options(model, otel, tools=[tool], capture_content=capture), "go")
    assert EMAIL not in recorded_text(otel)
    for name in ("execute_tool boom", "invoke_agent"):
        span = otel.span(name)
        assert span.status.description == "LookupError"
        (event,) = span.events
        attributes = dict(event.attributes or {})
        assert attributes["exception.type"] == "LookupError"
        if capture:
            assert attributes["exception.message"] == f"no row for {MARK}"
            assert f"LookupError: no row for {MARK}" in str(attributes["exception.stacktrace"])
        else:
            assert set(attributes) == {"exception.type"}


def test_error_codes_are_redacted_in_spans_and_metrics(otel: Recorded, mode: str) -> None:
    """A model's own error code holding PII is redacted in error.type, on spans and metrics."""
    model = script(mode, ModelError(f"DENIED {EMAIL}"))
    with pytest.raises(AgentError):
        drive(mode, options(model, otel), "hi")
    assert EMAIL not in recorded_text(otel)
    assert (otel.span("invoke_agent").attributes or {})["error.type"] == f"DENIED {MARK}"
    failed = [
        p
        for p in otel.metrics()["gen_ai.client.operation.duration"]
        if p.attributes.get("error.type") == f"DENIED {MARK}"
    ]
    assert len(failed) == 2  # the chat and the run


def string_values(otel: Recorded) -> list[str]:
    """Return every string an attribute, a status or an event holds, and every span name."""
    out: list[str] = []
    for span in otel.spans():
        out.append(span.name)
        out.append(span.status.description or "")
        holders = [span.attributes or {}] + [e.attributes or {} for e in span.events]
        for attributes in holders:
            for value in attributes.values():
                out.extend(value if isinstance(value, tuple) else [value])
    return [value for value in out if isinstance(value, str)]


def test_attribute_values_are_cut_at_16_kib_by_default(otel: Recorded, mode: str) -> None:
    """Every string telemetry records is at most 16 KiB of UTF-8, cut at a character."""
    long = "é" * 20_000  # 40,000 bytes
    model = script(mode, ModelError("MODEL_REFUSED", long))
    with pytest.raises(AgentError):
        drive(mode, options(model, otel, capture_content=True), long, session_id="s" * 20_000)
    run = otel.span("invoke_agent")
    messages = str((run.attributes or {})["gen_ai.input.messages"])
    assert 16 * 1024 - 1 <= len(messages.encode()) <= 16 * 1024 and messages.endswith("é")
    assert (run.attributes or {})["gen_ai.conversation.id"] == "s" * 16 * 1024
    assert run.status.description == "é" * 8 * 1024
    assert max(len(value.encode()) for value in string_values(otel)) == 16 * 1024


def test_the_cut_is_configured_beside_capture_content(otel: Recorded, mode: str) -> None:
    """``max_attribute_bytes`` sets the cut; None records values whole."""
    model = script(mode, ModelError("MODEL_REFUSED", "m" * 500), "x" * 500)
    small = options(model, otel, capture_content=True, max_attribute_bytes=100)
    with pytest.raises(AgentError):
        drive(mode, small, "u" * 500)
    assert max(len(value.encode()) for value in string_values(otel)) == 100
    otel.exporter.clear()
    whole = options(model, otel, capture_content=True, max_attribute_bytes=None)
    drive(mode, whole, "u" * 50_000)
    attributes = otel.span("invoke_agent").attributes or {}
    assert "x" * 500 in str(attributes["gen_ai.output.messages"])
    assert "u" * 50_000 in str(attributes["gen_ai.input.messages"])


def test_a_bad_cut_is_refused() -> None:
    """``max_attribute_bytes`` must be a positive int or None."""
    model = script("sync", "x")
    with pytest.raises(TypeError, match="max_attribute_bytes"):
        new_agent_options(model, max_attribute_bytes="16k")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="max_attribute_bytes"):
        new_agent_options(model, max_attribute_bytes=True)
    with pytest.raises(ValueError, match="max_attribute_bytes"):
        new_agent_options(model, max_attribute_bytes=0)
    assert new_agent_options(model).max_attribute_bytes == 16 * 1024


def test_capturing_arguments_that_are_not_json_does_not_fail_the_run(
    otel: Recorded, mode: str
) -> None:
    """Tool-call arguments that are not JSON (a set) are recorded as their redacted repr, and
    the run ends as it does without telemetry."""
    tool = Tool("t", "", {}, callback(mode, lambda _a: "r"))
    model = script(mode, ToolCall("t", {"a": {EMAIL}}, id="c"), "ok")
    result = drive(mode, options(model, otel, tools=[tool], capture_content=True), "go")
    assert result.output == "ok"
    assert len(otel.spans()) == 4 and EMAIL not in recorded_text(otel)
    reply = str((otel.spans()[0].attributes or {})["gen_ai.output.messages"])
    assert MARK in reply and "{'" in reply  # the repr of the shaped message, redacted
