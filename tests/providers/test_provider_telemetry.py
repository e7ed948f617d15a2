"""The GenAI attributes of openai_model and anthropic_model calls, through the agent loop against
a loopback server: provider, server, request parameters and what the server said."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from _model_servers import Reply, Server, Stream
from _otel import Recorded, points
from _payloads import chunk, completion, event, function_call, message, stream_of, text_block

from praxo_actors.agent import AgentError, Tool, arun_agent, new_agent_options
from praxo_actors.models import RunResult, session
from praxo_actors.providers import anthropic_model, openai_model
from praxo_actors.providers._telemetry import model_attributes

DURATION = "gen_ai.client.operation.duration"
TOKENS = "gen_ai.client.token.usage"
CONTENT = ("gen_ai.input.messages", "gen_ai.output.messages")
LOOK = Tool("look", "Look something up.", {"type": "object"}, lambda _a: "found")


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """Return in-memory providers, shut down after the test."""
    recorded = Recorded()
    yield recorded
    recorded.shutdown()


def port(server: Server) -> int:
    """Return the loopback server's port."""
    found = urlsplit(server.url).port
    assert found is not None
    return found


def run(model: Any, otel: Recorded) -> RunResult:
    """Run the agent loop on ``model`` (with the ``look`` tool) under asyncio, content captured."""
    options = new_agent_options(
        model,
        tools=[LOOK],
        capture_content=True,
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
    )

    async def go() -> RunResult:
        async with model:
            return await arun_agent(options, session("s"), "look it up")

    return asyncio.run(go())


def without_content(attributes: Any) -> dict[str, Any]:
    """Return a span's attributes less its message content."""
    return {k: v for k, v in dict(attributes or {}).items() if k not in CONTENT}


def finish_reasons(span: Any) -> list[str]:
    """Return the finish_reason of each of a span's output messages."""
    output = json.loads(str((span.attributes or {})["gen_ai.output.messages"]))
    return [entry["finish_reason"] for entry in output]


def test_openai_chat_spans_carry_provider_server_request_and_response(
    server: Server, otel: Recorded
) -> None:
    """Every chat span of openai_model names the provider, the server, the parameters given
    and the completion's id, model and finish reason; the metrics name the measured ones."""
    calling = completion(
        None, [function_call("c1", "look", '{"q":"x"}')], finish_reason="tool_calls"
    )
    answering = completion("found it", usage={"prompt_tokens": 20, "completion_tokens": 3})
    answering.update(id="chatcmpl-2", model="m-2024-08")
    server.script(Reply(calling), Reply(answering))
    model = openai_model(
        "m",
        base_url=f"{server.url}/v1",
        api_key="sk-test",
        temperature=0.2,
        max_tokens=50,
        top_p=1,
        seed=7,
        stop="END",
        presence_penalty=0.1,
        frequency_penalty=0.2,
        n=1,
        response_format={"type": "json_object"},
    )
    run(model, otel)
    first, _, second, agent = otel.spans()
    given = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.provider.name": "openai",
        "server.address": "127.0.0.1",
        "server.port": port(server),
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.max_tokens": 50,
        "gen_ai.request.top_p": 1.0,
        "gen_ai.request.seed": 7,
        "gen_ai.request.stop_sequences": ("END",),
        "gen_ai.request.presence_penalty": 0.1,
        "gen_ai.request.frequency_penalty": 0.2,
        "gen_ai.output.type": "json",
        "gen_ai.conversation.id": "s",
    }
    assert without_content(first.attributes) == {
        **given,
        "gen_ai.response.id": "chatcmpl-1",
        "gen_ai.response.model": "m",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 11,
        "gen_ai.usage.output_tokens": 7,
    }
    assert without_content(second.attributes) == {
        **given,
        "gen_ai.response.id": "chatcmpl-2",
        "gen_ai.response.model": "m-2024-08",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 20,
        "gen_ai.usage.output_tokens": 3,
    }
    assert (finish_reasons(first), finish_reasons(second), finish_reasons(agent)) == (
        ["tool_call"],
        ["stop"],
        ["stop"],
    )
    assert (agent.attributes or {})["gen_ai.provider.name"] == "openai"
    metrics = otel.metrics()
    measured = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.provider.name": "openai",
        "server.address": "127.0.0.1",
        "server.port": port(server),
    }
    chats = points(metrics, DURATION, gen_ai__operation__name="chat")
    assert sorted(p.attributes["gen_ai.response.model"] for p in chats) == ["m", "m-2024-08"]
    for point in chats:
        assert {k: v for k, v in point.attributes.items() if k != "gen_ai.response.model"} == (
            measured
        )
    assert len(metrics[TOKENS]) == 4
    assert all(p.attributes["gen_ai.provider.name"] == "openai" for p in metrics[TOKENS])
    (agent_point,) = points(metrics, DURATION, gen_ai__operation__name="invoke_agent")
    assert agent_point.attributes["gen_ai.provider.name"] == "openai"


def test_an_openai_stream_says_the_same(server: Server, otel: Recorded) -> None:
    """A streamed completion gives its id, model and finish reason from its chunks."""
    events = [
        chunk({"role": "assistant", "content": "Hel"}),
        chunk({"content": "lo"}, "length"),
        chunk(None, usage={"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}),
        (None, "[DONE]"),
    ]
    server.script(Stream(events))
    model = openai_model("m", base_url=f"{server.url}/v1", api_key="sk-test", stream=True)
    assert run(model, otel).output == "Hello"
    chat = otel.spans()[0]
    attributes = chat.attributes or {}
    assert attributes["gen_ai.response.id"] == "c"
    assert attributes["gen_ai.response.model"] == "m"
    assert attributes["gen_ai.response.finish_reasons"] == ("length",)
    assert finish_reasons(chat) == ["length"]


def test_a_failed_call_still_names_its_provider_and_server(server: Server, otel: Recorded) -> None:
    """An HTTP failure's chat span and metric point name the provider and the server."""
    server.script(Reply({"error": {"message": "down"}}, status=500))
    model = openai_model("m", base_url=f"{server.url}/v1", api_key="sk-test")
    with pytest.raises(AgentError):
        run(model, otel)
    chat = otel.spans()[0]
    attributes = chat.attributes or {}
    assert attributes["error.type"] == "MODEL_UNAVAILABLE"
    assert (attributes["gen_ai.provider.name"], attributes["server.port"]) == (
        "openai",
        port(server),
    )
    (point,) = points(otel.metrics(), DURATION, gen_ai__operation__name="chat")
    assert point.attributes["error.type"] == "MODEL_UNAVAILABLE"
    assert point.attributes["gen_ai.provider.name"] == "openai"
    assert point.attributes["server.address"] == "127.0.0.1"


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_chat_spans_carry_provider_server_request_and_response(
    server: Server, otel: Recorded, stream: bool
) -> None:
    """anthropic_model's chat spans name the provider, server, max_tokens and the parameters
    given, and the message's id, model and stop reason (as the schema says it, in content)."""
    if stream:
        server.script(Stream(stream_of(text_block(0, "found ", "it"))))
    else:
        server.script(Reply(message([{"type": "text", "text": "found it"}])))
    model = anthropic_model(
        "claude-test",
        base_url=server.url,
        api_key="sk-ant",
        stream=stream,
        max_tokens=300,
        stop_sequences=["END", "STOP"],
        extra_body={"temperature": 0.7, "top_k": 40},
    )
    run(model, otel)
    chat, agent = otel.spans()
    attributes = without_content(chat.attributes)
    for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"):
        assert type(attributes.pop(key)) is int
    assert attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "claude-test",
        "gen_ai.provider.name": "anthropic",
        "server.address": "127.0.0.1",
        "server.port": port(server),
        "gen_ai.request.max_tokens": 300,
        "gen_ai.request.temperature": 0.7,
        "gen_ai.request.top_k": 40.0,
        "gen_ai.request.stop_sequences": ("END", "STOP"),
        "gen_ai.conversation.id": "s",
        "gen_ai.response.id": "msg_1",
        "gen_ai.response.model": "m",
        "gen_ai.response.finish_reasons": ("end_turn",),
    }
    assert finish_reasons(chat) == finish_reasons(agent) == ["stop"]
    (point,) = points(otel.metrics(), DURATION, gen_ai__operation__name="chat")
    assert point.attributes["gen_ai.provider.name"] == "anthropic"


def test_an_anthropic_tool_use_is_a_tool_call_finish(server: Server, otel: Recorded) -> None:
    """A message that stops for tool use has finish_reason ``tool_call`` in its output."""
    calling = message(
        [{"type": "tool_use", "id": "tu1", "name": "look", "input": {"q": "x"}}],
        stop_reason="tool_use",
    )
    server.script(Reply(calling), Reply(message([{"type": "text", "text": "ok"}])))
    run(anthropic_model("claude-test", base_url=server.url, api_key="sk-ant"), otel)
    first = otel.spans()[0]
    assert (first.attributes or {})["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert finish_reasons(first) == ["tool_call"]


def test_a_stream_event_names_the_message(server: Server, otel: Recorded) -> None:
    """A streamed message's id and model are those of its message_start event."""
    events = stream_of(text_block(0, "hi"))
    events[0] = event("message_start", message={**message([]), "id": "msg_9", "model": "c-9"})
    server.script(Stream(events))
    model = anthropic_model("claude-test", base_url=server.url, api_key="sk-ant", stream=True)
    run(model, otel)
    attributes = otel.spans()[0].attributes or {}
    assert (attributes["gen_ai.response.id"], attributes["gen_ai.response.model"]) == (
        "msg_9",
        "c-9",
    )


@pytest.mark.parametrize(
    ("url", "server_attributes"),
    [
        ("https://api.example.com/v1", {"server.address": "api.example.com", "server.port": 443}),
        ("http://[::1]:8000/v1", {"server.address": "::1", "server.port": 8000}),
        ("http://llm.local/", {"server.address": "llm.local", "server.port": 80}),
        ("unix:///tmp/sock", {}),
        ("http://host:port/", {}),
        (None, {}),
    ],
)
def test_the_server_is_read_from_the_base_url(url: Any, server_attributes: Any) -> None:
    """server.address and server.port come from the base URL (its scheme's port by default);
    a URL without a host, or with a port that is no number, names no server."""
    assert model_attributes("openai", url, {}) == {
        "gen_ai.provider.name": "openai",
        **server_attributes,
    }


def test_only_request_parameters_of_known_shape_are_named() -> None:
    """Parameters of the wrong type, ``n=1`` and unknown ones are left out."""
    params = {
        "temperature": "hot",
        "max_tokens": 2.5,
        "seed": True,
        "n": 1,
        "stop": ["a", 3],
        "tool_choice": "auto",
        "response_format": {"type": "text"},
        "max_completion_tokens": 9,
    }
    assert model_attributes("openai", None, params) == {
        "gen_ai.provider.name": "openai",
        "gen_ai.output.type": "text",
        "gen_ai.request.max_tokens": 9,
    }
    assert model_attributes("openai", None, {"n": 3})["gen_ai.request.choice.count"] == 3
    extra = {"temperature": 0.5, "extra_body": {"temperature": 0.9, "top_k": 5}}
    assert model_attributes("anthropic", None, extra) == {
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.temperature": 0.9,  # the SDKs send extra_body's value
        "gen_ai.request.top_k": 5.0,
    }
