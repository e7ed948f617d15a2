"""Every malformed 200 answer is ``MODEL_BAD_RESPONSE``, never a raw exception nor a wrong reply.

Table-driven, for both adapters, plain and streamed: bodies and stream events that are not
JSON (or are cut off, or are not UTF-8), and JSON of the wrong shape (fields missing or of
the wrong type).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _model_servers import Raw, Reply, Server, Stream
from _payloads import (
    Deltas,
    chunk,
    completion,
    event,
    function_call,
    message,
    request,
    stream_of,
    text_block,
    tool_block,
)

from praxo_actors.agent import ModelContext
from praxo_actors.agent._context import enter_model, leave_model
from praxo_actors.models import ModelError
from praxo_actors.providers import anthropic_model, openai_model

PROVIDERS = ["openai", "anthropic"]

# Bodies that are not JSON, whichever API answers them.
NOT_JSON = [
    pytest.param(Raw(b"Internal proxy page"), id="text"),
    pytest.param(Raw(b'{"id": "chatcmpl-1", "choi'), id="cut-off"),
    pytest.param(Raw(b""), id="empty"),
    pytest.param(Raw(b'{"id": "\xff\xfe"}'), id="not-utf-8"),
]

# Stream events that are not JSON, whichever API streams them.
EVENTS_NOT_JSON = [
    pytest.param(b"{not json", id="not-json"),
    pytest.param(b'{"type": "message_start", "mess', id="cut-off"),
    pytest.param(b'{"type": "\xff"}', id="not-utf-8"),
]


def openai_body(**message_fields: Any) -> dict[str, Any]:
    """Return a completion whose message has ``message_fields`` (None: the field left out)."""
    body = completion("hello")
    fields = {**body["choices"][0]["message"], **message_fields}
    body["choices"][0]["message"] = {k: v for k, v in fields.items() if v is not None}
    return body


OPENAI_SHAPES = [
    pytest.param(None, id="null"),
    pytest.param([completion()], id="a-list"),
    pytest.param({**completion(), "choices": "nope"}, id="choices-a-string"),
    pytest.param({**completion(), "choices": [None]}, id="choice-null"),
    pytest.param({**completion(), "choices": [{"index": 0}]}, id="no-message"),
    pytest.param(openai_body(content=5), id="content-a-number"),
    pytest.param(openai_body(content={"text": "hi"}), id="content-an-object"),
    pytest.param(openai_body(refusal=7, content=""), id="refusal-a-number"),
    pytest.param(openai_body(tool_calls="look"), id="tool-calls-a-string"),
    pytest.param(
        openai_body(tool_calls=[{"id": "c1", "function": "look"}]), id="function-a-string"
    ),
    pytest.param(
        openai_body(tool_calls=[{**function_call("c1", "look", "{}"), "id": 5}]),
        id="call-id-a-number",
    ),
]


def anthropic_body(*blocks: Any, **fields: Any) -> dict[str, Any]:
    """Return a message of ``blocks`` with ``fields`` replaced."""
    return {**message(list(blocks)), **fields}


ANTHROPIC_SHAPES = [
    pytest.param(None, id="null"),
    pytest.param([message([])], id="a-list"),
    pytest.param({"type": "message", "role": "assistant"}, id="no-content"),
    pytest.param(anthropic_body(content={"type": "text"}), id="content-an-object"),
    pytest.param(anthropic_body(None), id="block-null"),
    pytest.param(anthropic_body({"text": "hi"}), id="block-without-type"),
    pytest.param(anthropic_body({"type": "text"}), id="text-missing"),
    pytest.param(anthropic_body({"type": "text", "text": 5}), id="text-a-number"),
    pytest.param(
        anthropic_body({"type": "tool_use", "name": "look", "input": {}}), id="tool-id-missing"
    ),
    pytest.param(
        anthropic_body({"type": "tool_use", "id": 5, "name": "look", "input": {}}),
        id="tool-id-a-number",
    ),
]


def openai_call(**fields: Any) -> Any:
    """Return a chunk carrying one tool-call fragment with ``fields``."""
    part = {"index": 0, "id": "c1", "type": "function", "function": {"name": "look"}, **fields}
    return chunk({"tool_calls": [part]})


OPENAI_STREAMS = [
    pytest.param([(None, [1, 2])], id="chunk-a-list"),
    pytest.param([(None, '"text"')], id="chunk-a-string"),
    pytest.param(
        [(None, {"object": "chat.completion.chunk", "choices": "x"})], id="choices-a-string"
    ),
    pytest.param([chunk({"content": 5})], id="content-a-number"),
    pytest.param([chunk({"content": ["x"]})], id="content-a-list"),
    pytest.param([chunk({"tool_calls": "look"})], id="tool-calls-a-string"),
    pytest.param([openai_call(index="first")], id="call-index-a-string"),
    pytest.param([openai_call(id=5)], id="call-id-a-number"),
    pytest.param([openai_call(function={"name": 5})], id="call-name-a-number"),
    pytest.param([openai_call(function={"name": "look", "arguments": 5})], id="arguments-a-number"),
]

START = event("message_start", message=message([]))
TEXT_START = event("content_block_start", index=0, content_block={"type": "text", "text": ""})


def text_delta(**fields: Any) -> Any:
    """Return a content_block_delta event with ``fields``."""
    return event("content_block_delta", **{"index": 0, **fields})


ANTHROPIC_STREAMS = [
    pytest.param([("message_start", [1])], id="event-a-list"),
    pytest.param([("message_start", {"message": message([])})], id="event-without-type"),
    pytest.param([event("message_start")], id="start-without-message"),
    pytest.param(
        [START, TEXT_START, text_delta(delta={"type": "text_delta"})], id="delta-text-missing"
    ),
    pytest.param(
        [START, TEXT_START, text_delta(delta={"type": "text_delta", "text": 5})],
        id="delta-text-a-number",
    ),
    pytest.param(
        [START, TEXT_START, text_delta(index=None, delta={"type": "text_delta", "text": "x"})],
        id="delta-index-missing",
    ),
    pytest.param([START, TEXT_START, text_delta(delta={"text": "x"})], id="delta-without-type"),
    pytest.param(
        [
            START,
            event(
                "content_block_start",
                index=0,
                content_block={"type": "tool_use", "id": 5, "name": "look", "input": {}},
            ),
        ],
        id="tool-id-a-number",
    ),
    pytest.param(
        [START, *tool_block(0, "tu1", "look"), text_delta(delta={"type": "input_json_delta"})],
        id="tool-json-missing",
    ),
    pytest.param(
        stream_of(
            [
                event(
                    "content_block_start",
                    index=0,
                    content_block={"type": "tool_use", "id": "tu1", "name": "look", "input": {}},
                ),
                text_delta(delta={"type": "input_json_delta", "partial_json": 7}),
            ]
        ),
        id="tool-json-a-number",
    ),
]


def make(provider: str, server: Server, **kwargs: Any) -> Any:
    """Return the provider's model on the server."""
    if provider == "openai":
        return openai_model("m", base_url=f"{server.url}/v1", api_key="sk-test", **kwargs)
    return anthropic_model("m", base_url=server.url, api_key="sk-ant", **kwargs)


def ask(model: Any, deltas: Deltas) -> Any:
    """Call the model once on a fresh loop, in a model context recording ``deltas``."""

    async def go() -> Any:
        token = enter_model(ModelContext("run_1", "s1", 1, deltas))
        try:
            async with model:
                return await model(request())
        finally:
            leave_model(token)

    return asyncio.run(go())


def assert_bad_response(result: Any, provider: str) -> None:
    """Assert that ``result`` is the provider's MODEL_BAD_RESPONSE."""
    assert isinstance(result, ModelError), result
    assert result.code == "MODEL_BAD_RESPONSE"
    assert result.message.startswith(f"{provider}: ")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("body", NOT_JSON)
def test_a_body_that_is_not_json_is_a_bad_response(
    server: Server, provider: str, body: Raw
) -> None:
    """A 200 body that is not JSON, cut off or not UTF-8 is MODEL_BAD_RESPONSE."""
    server.script(body)
    result = ask(make(provider, server), Deltas())
    assert_bad_response(result, provider)
    assert "not JSON" in result.message


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("data", EVENTS_NOT_JSON)
def test_a_stream_event_that_is_not_json_is_a_bad_response(
    server: Server, provider: str, data: bytes
) -> None:
    """A streamed event that is not JSON, after good ones, is MODEL_BAD_RESPONSE."""
    if provider == "openai":
        events: list[Any] = [chunk({"content": "par"}), (None, data)]
    else:
        events = [START, TEXT_START, text_delta(delta={"type": "text_delta", "text": "par"})]
        events.append(("content_block_delta", data))
    server.script(Stream(events))
    deltas = Deltas()
    result = ask(make(provider, server, stream=True), deltas)
    assert_bad_response(result, provider)
    assert "not JSON" in result.message
    assert deltas.texts == ["par"]  # what came before it was streamed as it came


@pytest.mark.parametrize("body", OPENAI_SHAPES)
def test_an_openai_body_of_the_wrong_shape_is_a_bad_response(server: Server, body: Any) -> None:
    """A completion with a field missing or of the wrong type is MODEL_BAD_RESPONSE."""
    server.script(Reply(body))
    assert_bad_response(ask(make("openai", server), Deltas()), "openai")


@pytest.mark.parametrize("body", ANTHROPIC_SHAPES)
def test_an_anthropic_body_of_the_wrong_shape_is_a_bad_response(server: Server, body: Any) -> None:
    """A message with a field missing or of the wrong type is MODEL_BAD_RESPONSE."""
    server.script(Reply(body))
    assert_bad_response(ask(make("anthropic", server), Deltas()), "anthropic")


@pytest.mark.parametrize("events", OPENAI_STREAMS)
def test_an_openai_chunk_of_the_wrong_shape_is_a_bad_response(
    server: Server, events: list[Any]
) -> None:
    """A chunk with a field of the wrong type is MODEL_BAD_RESPONSE, and sends no delta."""
    server.script(Stream([*events, chunk({}, "stop"), (None, "[DONE]")]))
    deltas = Deltas()
    assert_bad_response(ask(make("openai", server, stream=True), deltas), "openai")
    assert deltas.texts == []


@pytest.mark.parametrize("events", ANTHROPIC_STREAMS)
def test_an_anthropic_event_of_the_wrong_shape_is_a_bad_response(
    server: Server, events: list[Any]
) -> None:
    """An event with a field missing or of the wrong type is MODEL_BAD_RESPONSE, no delta."""
    server.script(Stream(events))
    deltas = Deltas()
    assert_bad_response(ask(make("anthropic", server, stream=True), deltas), "anthropic")
    assert deltas.texts == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unknown_blocks_and_events_are_skipped(server: Server, provider: str) -> None:
    """Parts a newer API adds (other block, delta or event types) are skipped, not refused."""
    if provider == "openai":
        events: list[Any] = [
            chunk({"content": "ok", "reasoning_content": "hm"}, "stop"),
            (None, "[DONE]"),
        ]
    else:
        thinking = event("content_block_start", index=1, content_block={"type": "thinking"})
        events = stream_of(
            text_block(0, "ok"),
            [thinking, text_delta(index=1, delta={"type": "thinking_delta", "thinking": "hm"})],
        )
        events.insert(1, event("future_event", detail={}))
    server.script(Stream(events))
    deltas = Deltas()
    result = ask(make(provider, server, stream=True), deltas)
    assert (result.message.content, deltas.texts) == ("ok", ["ok"])
