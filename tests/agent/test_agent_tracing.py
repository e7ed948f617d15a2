"""OpenTelemetry spans and metrics of direct runs (run_agent, arun_agent), after the GenAI
semantic conventions."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from _otel import Recorded, points
from opentelemetry.trace import SpanKind, StatusCode

from praxo_actors.agent import (
    AgentError,
    ListJournal,
    Tool,
    ToolError,
    arun_agent,
    fallback_model,
    new_agent_options,
    run_agent,
    start_run,
)
from praxo_actors.middleware import structured_output
from praxo_actors.models import (
    ImageBlock,
    Message,
    ModelError,
    Request,
    Response,
    TextBlock,
    ToolCall,
    message_assistant,
    session,
)
from praxo_actors.testing import ScriptedModel

EMAIL = "ada@example.com"
SECRET_INPUT = f"add 2 and 3 for {EMAIL}"


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """Return in-memory providers, shut down after the test."""
    recorded = Recorded()
    yield recorded
    recorded.shutdown()


def add(arguments: dict[str, Any]) -> Any:
    return {"sum": arguments["a"] + arguments["b"], "note": f"sent to {EMAIL}"}


ADD = Tool("add", "Add two numbers.", {"type": "object"}, add)


def script() -> ScriptedModel:
    return ScriptedModel(
        [
            ToolCall("add", {"a": 2, "b": 3, "who": EMAIL}, id="call-1"),
            Response(
                message_assistant(f"5, {EMAIL}"), usage={"input_tokens": 7, "output_tokens": 3}
            ),
        ]
    )


def all_attribute_text(otel: Recorded) -> str:
    return json.dumps([dict(s.attributes or {}) for s in otel.spans()])


def test_a_run_is_one_invoke_agent_span_with_chat_and_tool_children(otel: Recorded) -> None:
    """A run's model and tool calls are children of its invoke_agent span, in order."""
    options = new_agent_options(
        script(), tools=[ADD], name="calc", tracer_provider=otel.tracer_provider
    )
    result = run_agent(options, session("s-1"), SECRET_INPUT)
    assert otel.names() == [
        "chat ScriptedModel",
        "execute_tool add",
        "chat ScriptedModel",
        "invoke_agent calc",
    ]
    run = otel.span("invoke_agent calc")
    assert run.parent is None and run.kind is SpanKind.INTERNAL
    assert dict(run.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "calc",
        "gen_ai.conversation.id": "s-1",
        "praxo.run.id": result.run_id,
        "praxo.run.steps": 2,
        "gen_ai.usage.input_tokens": 7,
        "gen_ai.usage.output_tokens": 3,
    }
    assert run.status.status_code is StatusCode.UNSET
    for child in otel.spans()[:3]:
        assert child.parent is not None and child.parent.span_id == run.context.span_id
        assert child.context.trace_id == run.context.trace_id
        assert child.start_time >= run.start_time and child.end_time <= run.end_time
    chat = otel.spans()[0]
    assert chat.kind is SpanKind.CLIENT
    assert chat.attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "ScriptedModel",
        "gen_ai.conversation.id": "s-1",
    }
    tool = otel.span("execute_tool add")
    assert tool.attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.type": "function",
        "gen_ai.conversation.id": "s-1",
        "gen_ai.tool.call.id": "call-1",
    }
    assert otel.spans()[2].attributes["gen_ai.usage.output_tokens"] == 3  # type: ignore[index]


def test_no_content_is_recorded_by_default(otel: Recorded) -> None:
    """Without capture_content no span holds message text, tool arguments or results."""
    options = new_agent_options(script(), tools=[ADD], tracer_provider=otel.tracer_provider)
    run_agent(options, session("s"), SECRET_INPUT)
    text = all_attribute_text(otel)
    assert len(otel.spans()) == 4
    assert EMAIL not in text and "REDACTED" not in text and "add 2 and 3" not in text
    for span in otel.spans():
        assert not any(
            key.startswith(
                (
                    "gen_ai.input",
                    "gen_ai.output",
                    "gen_ai.tool.call.a",
                    "gen_ai.tool.call.r",
                    "input.",
                    "output.",
                )
            )
            for key in span.attributes or {}
        )
    assert otel.spans()[-1].name == "invoke_agent"  # no name given: the bare operation


def test_captured_content_is_pii_redacted(otel: Recorded) -> None:
    """With capture_content, messages, tool arguments and results are recorded redacted."""
    options = new_agent_options(
        script(), tools=[ADD], tracer_provider=otel.tracer_provider, capture_content=True
    )
    run_agent(options, session("s"), SECRET_INPUT)
    assert EMAIL not in all_attribute_text(otel)
    run = otel.spans()[-1]
    attributes = run.attributes or {}
    assert json.loads(str(attributes["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": "add 2 and 3 for [REDACTED_EMAIL]"}]}
    ]
    assert json.loads(str(attributes["gen_ai.output.messages"])) == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "5, [REDACTED_EMAIL]"}],
            "finish_reason": "stop",
        }
    ]
    tool = otel.span("execute_tool add").attributes or {}
    assert json.loads(str(tool["gen_ai.tool.call.arguments"])) == {
        "a": 2,
        "b": 3,
        "who": "[REDACTED_EMAIL]",
    }
    assert json.loads(str(tool["gen_ai.tool.call.result"])) == {
        "sum": 5,
        "note": "sent to [REDACTED_EMAIL]",
    }
    second_chat = otel.spans()[2].attributes or {}
    history = json.loads(str(second_chat["gen_ai.input.messages"]))
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert history[1]["parts"][0]["arguments"]["who"] == "[REDACTED_EMAIL]"


def test_a_model_error_sets_error_type_on_the_chat_and_the_run(otel: Recorded) -> None:
    """A ModelError's code is error.type of its chat span and of the failed run's span."""
    model = ScriptedModel([ModelError("MODEL_RATE_LIMITED", "slow down")])
    options = new_agent_options(model, tracer_provider=otel.tracer_provider)
    with pytest.raises(AgentError):
        run_agent(options, session("s"), "hi")
    chat, run = otel.spans()
    for span in (chat, run):
        assert (span.attributes or {})["error.type"] == "MODEL_RATE_LIMITED"
        assert span.status.status_code is StatusCode.ERROR


def test_a_fallback_attempt_is_a_chat_span_of_its_own(otel: Recorded) -> None:
    """Each attempt of a fallback_model is one chat span named after the child called."""

    def primary(_request: Request) -> ModelError:
        return ModelError("MODEL_UNAVAILABLE")

    def backup(_request: Request) -> Response:
        return Response(message_assistant("ok"))

    options = new_agent_options(
        fallback_model(primary, backup), tracer_provider=otel.tracer_provider
    )
    run_agent(options, session("s"), "hi")
    assert otel.names() == ["chat primary", "chat backup", "invoke_agent"]
    assert (otel.span("chat primary").attributes or {})["error.type"] == "MODEL_UNAVAILABLE"
    assert "error.type" not in (otel.span("chat backup").attributes or {})
    assert "error.type" not in (otel.span("invoke_agent").attributes or {})


def test_a_tool_error_marks_the_tool_span_and_the_run_goes_on(otel: Recorded) -> None:
    """A ToolError's code is error.type of its execute_tool span; the run completes."""
    refuse = Tool("refuse", "", {}, lambda _a: ToolError("NOPE", "refused"))
    model = ScriptedModel([ToolCall("refuse", {}, id="c"), "fine"])
    options = new_agent_options(model, tools=[refuse], tracer_provider=otel.tracer_provider)
    assert run_agent(options, session("s"), "go").output == "fine"
    tool = otel.span("execute_tool refuse")
    assert (tool.attributes or {})["error.type"] == "NOPE"
    assert tool.status.status_code is StatusCode.ERROR
    assert otel.span("invoke_agent").status.status_code is StatusCode.UNSET


def test_a_callback_exception_is_error_type_by_its_type_name(otel: Recorded) -> None:
    """A tool that raises gives its span and the run's span error.type = the exception's type."""

    def boom(_arguments: dict[str, Any]) -> Any:
        raise LookupError("gone")

    model = ScriptedModel([ToolCall("boom", {}, id="c")])
    options = new_agent_options(
        model, tools=[Tool("boom", "", {}, boom)], tracer_provider=otel.tracer_provider
    )
    with pytest.raises(LookupError):
        run_agent(options, session("s"), "go")
    assert (otel.span("execute_tool boom").attributes or {})["error.type"] == "LookupError"
    assert (otel.span("invoke_agent").attributes or {})["error.type"] == "LookupError"


def test_a_run_failing_with_a_code_sets_it_on_the_run_span(otel: Recorded) -> None:
    """AGENT_MAX_STEPS, raised by the loop itself, is the run span's error.type."""
    model = ScriptedModel([ToolCall("add", {"a": 1, "b": 1}, id="c")])
    options = new_agent_options(
        model, tools=[ADD], max_steps=1, tracer_provider=otel.tracer_provider
    )
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "go")
    assert info.value.code == "AGENT_MAX_STEPS"
    run = otel.span("invoke_agent")
    assert (run.attributes or {})["error.type"] == "AGENT_MAX_STEPS"
    assert "error.type" not in (otel.span("execute_tool add").attributes or {})


def test_arun_agent_times_the_awaited_call(otel: Recorded) -> None:
    """Under arun_agent a chat span lasts as long as the async model was awaited."""

    async def slow(_request: Request) -> Response:
        await asyncio.sleep(0.05)  # the work being timed, not a wait for another task
        return Response(message_assistant("late"))

    options = new_agent_options(slow, name="slow", tracer_provider=otel.tracer_provider)
    asyncio.run(arun_agent(options, session("s"), "hi"))
    chat = otel.span("chat slow")
    assert chat.end_time is not None and chat.start_time is not None
    assert chat.end_time - chat.start_time >= 50_000_000
    assert chat.parent is not None
    assert chat.parent.span_id == otel.span("invoke_agent slow").context.span_id


def test_a_journaled_run_is_traced_too(otel: Recorded) -> None:
    """A durable direct run (with a journal) reports the same spans."""
    options = new_agent_options(script(), tools=[ADD], tracer_provider=otel.tracer_provider)
    run_agent(options, session("s"), "go", journal=ListJournal())
    assert otel.names()[-1] == "invoke_agent" and len(otel.names()) == 4


def test_metrics_record_operation_durations_and_tokens(otel: Recorded) -> None:
    """gen_ai.client.operation.duration has a point per chat and per run; tokens are counted."""
    options = new_agent_options(
        script(), tools=[ADD], name="calc", meter_provider=otel.meter_provider
    )
    run_agent(options, session("s"), "go")
    metrics = otel.metrics()
    duration = "gen_ai.client.operation.duration"
    (chat,) = points(metrics, duration, gen_ai__operation__name="chat")
    assert chat.count == 2 and chat.attributes["gen_ai.request.model"] == "ScriptedModel"
    (run,) = points(metrics, duration, gen_ai__operation__name="invoke_agent")
    assert run.count == 1 and run.attributes["gen_ai.agent.name"] == "calc"
    assert run.sum >= chat.sum
    tokens = "gen_ai.client.token.usage"
    assert [p.sum for p in points(metrics, tokens, gen_ai__token__type="input")] == [7]
    assert [p.sum for p in points(metrics, tokens, gen_ai__token__type="output")] == [3]
    assert otel.spans() == []  # a meter provider alone traces nothing


def test_failed_operations_are_measured_with_their_error_type(otel: Recorded) -> None:
    """A failed model call and its run are measured with error.type set."""
    model = ScriptedModel([ModelError("MODEL_TIMEOUT")])
    options = new_agent_options(model, meter_provider=otel.meter_provider)
    with pytest.raises(AgentError):
        run_agent(options, session("s"), "go")
    metrics = otel.metrics()
    failed = points(metrics, "gen_ai.client.operation.duration", error__type="MODEL_TIMEOUT")
    assert sorted(p.attributes["gen_ai.operation.name"] for p in failed) == [
        "chat",
        "invoke_agent",
    ]


def test_without_a_provider_the_run_is_not_wrapped() -> None:
    """With no provider set anywhere the run is the bare state machine (no tracing cost)."""
    run = start_run(new_agent_options(ScriptedModel(["hi"])), session("s"), "go")
    assert run._gen.gi_code.co_name == "machine"  # type: ignore[attr-defined]


def test_bad_providers_are_refused() -> None:
    """A provider that is not an OpenTelemetry provider is a TypeError naming the field."""
    with pytest.raises(TypeError, match="tracer_provider"):
        new_agent_options(ScriptedModel([]), tracer_provider=object())
    with pytest.raises(TypeError, match="meter_provider"):
        new_agent_options(ScriptedModel([]), meter_provider="otel")
    with pytest.raises(TypeError, match="capture_content"):
        new_agent_options(ScriptedModel([]), capture_content=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="name"):
        new_agent_options(ScriptedModel([]), name="")


def test_the_global_providers_are_used_when_none_is_given() -> None:
    """Options without providers use the global ones, once a host has set them."""
    code = textwrap.dedent(
        """
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from praxo_actors.agent import new_agent_options, run_agent
        from praxo_actors.models import session
        from praxo_actors.testing import ScriptedModel

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        reader = InMemoryMetricReader()
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        run_agent(new_agent_options(ScriptedModel(["hi"]), name="g"), session("s"), "go")
        print(sorted(s.name for s in exporter.get_finished_spans()))
        (scope,) = reader.get_metrics_data().resource_metrics[0].scope_metrics
        print(sorted(m.name for m in scope.metrics))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "['chat ScriptedModel', 'invoke_agent g']",
        "['gen_ai.client.operation.duration']",
    ]


class Contact(msgspec.Struct):
    """A typed output holding personal data."""

    name: str
    email: str


def test_the_run_span_carries_input_and_output_values_for_openinference(otel: Recorded) -> None:
    """With capture_content the invoke_agent span also holds ``input.value`` and
    ``output.value`` (the run's text, redacted) with their mime types; its children do not."""
    options = new_agent_options(
        script(), tools=[ADD], tracer_provider=otel.tracer_provider, capture_content=True
    )
    run_agent(options, session("s"), SECRET_INPUT)
    run = otel.spans()[-1]
    attributes = run.attributes or {}
    assert run.name == "invoke_agent"
    assert attributes["input.value"] == "add 2 and 3 for [REDACTED_EMAIL]"
    assert attributes["input.mime_type"] == "text/plain"
    assert attributes["output.value"] == "5, [REDACTED_EMAIL]"
    assert attributes["output.mime_type"] == "text/plain"
    for child in otel.spans()[:-1]:
        assert not {"input.value", "output.value"} & set(child.attributes or {})


def test_blocks_in_and_a_typed_output_are_json_values(otel: Recorded) -> None:
    """An input of blocks is its GenAI message JSON; a typed output its JSON, redacted."""
    answer = json.dumps({"name": "Ada", "email": EMAIL})
    options = new_agent_options(
        ScriptedModel([Response(message_assistant(answer))]),
        structured_output=structured_output(Contact),
        tracer_provider=otel.tracer_provider,
        capture_content=True,
    )
    user = Message(role="user", content=[TextBlock(f"who is {EMAIL}?"), ImageBlock("u")])
    result = run_agent(options, session("s"), user)
    assert result.structured == Contact("Ada", EMAIL)
    attributes = otel.spans()[-1].attributes or {}
    assert attributes["input.mime_type"] == "application/json"
    assert json.loads(str(attributes["input.value"])) == [
        {
            "role": "user",
            "parts": [
                {"type": "text", "content": "who is [REDACTED_EMAIL]?"},
                {"type": "uri", "modality": "image", "mime_type": None},
            ],
        }
    ]
    assert attributes["output.mime_type"] == "application/json"
    assert json.loads(str(attributes["output.value"])) == {
        "name": "Ada",
        "email": "[REDACTED_EMAIL]",
    }


def test_values_are_cut_like_the_messages(otel: Recorded) -> None:
    """``input.value`` and ``output.value`` are cut at the run's attribute size."""
    options = new_agent_options(
        ScriptedModel([Response(message_assistant("y" * 5000))]),
        tracer_provider=otel.tracer_provider,
        capture_content=True,
        max_attribute_bytes=1024,
    )
    run_agent(options, session("s"), "x" * 5000)
    attributes = otel.spans()[-1].attributes or {}
    for key in ("input.value", "output.value"):
        assert 0 < len(str(attributes[key]).encode()) <= 1024
