"""anthropic_model against a loopback server through the real anthropic SDK."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

import pytest
from _model_servers import Drop, Hang, Reply, Server, Stream
from _payloads import LOOK, Deltas, event, message, request, stream_of, text_block, tool_block

from praxo_actors.agent import ModelContext
from praxo_actors.agent._context import enter_model, leave_model
from praxo_actors.models import (
    ImageBlock,
    Message,
    ModelError,
    Response,
    TextBlock,
    ToolCall,
    message_assistant,
    message_system,
    message_tool,
    message_user,
)
from praxo_actors.providers import AnthropicModel, anthropic_model, retry_after


def model(server: Server, **kwargs: Any) -> AnthropicModel:
    """Return an anthropic_model on the server."""
    return anthropic_model("claude-test", base_url=server.url, api_key="sk-ant", **kwargs)


def ask(model: AnthropicModel, *requests: Any, deltas: Deltas | None = None) -> list[Any]:
    """Call the model with each request on a fresh loop (in a model context with ``deltas``)."""

    async def go() -> list[Any]:
        token = enter_model(ModelContext("run_1", "s1", 1, deltas) if deltas else None)
        try:
            async with model:
                return [await model(r) for r in requests]
        finally:
            leave_model(token)

    return asyncio.run(go())


def error_body(kind: str, text: str) -> dict[str, Any]:
    """Return an Anthropic error body."""
    return {"type": "error", "error": {"type": kind, "message": text}}


def test_a_text_reply_keeps_its_usage(server: Server) -> None:
    """The message's text blocks become the assistant text; usage counts are kept."""
    usage = {"input_tokens": 13, "output_tokens": 5, "cache_read_input_tokens": 2}
    server.script(
        Reply(message([{"type": "text", "text": "hi "}, {"type": "text", "text": "you"}], **usage))
    )
    [result] = ask(model(server), request())
    assert result == Response(
        Message(role="assistant", content="hi you"),
        usage=usage,
        finish_reason="end_turn",
        id="msg_1",
        model="m",
    )
    sent = server.requests[0]
    assert sent.path == "/v1/messages"
    assert "sk-ant" in (sent.headers.get("x-api-key", "") + sent.headers.get("authorization", ""))


def test_the_system_prompt_goes_apart_and_tool_results_merge_into_one_turn(server: Server) -> None:
    """System text is ``system``; calls are tool_use blocks; consecutive results are one turn."""
    server.script(Reply(message([{"type": "text", "text": "ok"}])))
    messages = [
        message_system("be brief"),
        message_user("look twice"),
        message_assistant("", [ToolCall("look", {"q": "a"}, "t1"), ToolCall("look", {}, "t2")]),
        message_tool("t1", "look", "A"),
        message_tool("t2", "look", "B"),
        message_user("and?"),
        message_system("be kind"),
    ]
    ask(model(server, stop_sequences=["END"], max_tokens=99), request(*messages))
    body = server.bodies()[0]
    assert (body["model"], body["max_tokens"]) == ("claude-test", 99)
    assert body["stop_sequences"] == ["END"]
    assert body["system"] == "be brief\n\nbe kind"
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "look twice"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "look", "input": {"q": "a"}},
                {"type": "tool_use", "id": "t2", "name": "look", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "A"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "B"},
                {"type": "text", "text": "and?"},
            ],
        },
    ]
    assert body["tools"] == [
        {"name": "look", "description": LOOK.description, "input_schema": LOOK.parameters}
    ]


def test_images_and_id_less_calls_map_over(server: Server) -> None:
    """Images become url or base64 sources; id-less calls get ids their results answer."""
    server.script(Reply(message([{"type": "text", "text": "ok"}])))
    messages = [
        Message(
            role="user",
            content=[
                TextBlock("see"),
                ImageBlock("https://example.invalid/a.png"),
                ImageBlock("data:image/png;base64,QUJD"),
            ],
        ),
        message_assistant("checking", [ToolCall("look", {"q": "x"})]),
        message_tool(None, "look", "X"),
        message_assistant("<tool_call>{bad</tool_call>"),
        Message(role="tool", content='{"error":{}}'),
    ]
    ask(model(server), request(*messages))
    wire = server.bodies()[0]["messages"]
    assert wire[0]["content"][1:] == [
        {"type": "image", "source": {"type": "url", "url": "https://example.invalid/a.png"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}},
    ]
    assert wire[1]["content"] == [
        {"type": "text", "text": "checking"},
        {"type": "tool_use", "id": "call_1_0", "name": "look", "input": {"q": "x"}},
    ]
    assert wire[2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "call_1_0", "content": "X"}],
    }
    # The report of malformed markup answers no call: it is user text after the assistant turn.
    assert wire[3]["role"] == "assistant"
    assert wire[4] == {"role": "user", "content": [{"type": "text", "text": '{"error":{}}'}]}


@pytest.mark.parametrize(
    "bad",
    [
        Message(role="assistant", content=[ImageBlock("https://x/y.png")]),
        Message(role="user", content=[ImageBlock("data:image/png,raw")]),
    ],
)
def test_an_inexpressible_message_is_a_bad_request(server: Server, bad: Message) -> None:
    """An assistant image or a data URL that is not base64 gives MODEL_BAD_REQUEST unsent."""
    [result] = ask(model(server), request(message_user("hi"), bad))
    assert result.code == "MODEL_BAD_REQUEST"
    assert server.requests == []


@pytest.mark.parametrize("body", ["a string", {"content": 3}, {"content": [{"type": "text"}]}])
def test_an_answer_of_the_wrong_shape_is_a_bad_response(server: Server, body: Any) -> None:
    """A 200 body that is not a message gives MODEL_BAD_RESPONSE, not an exception."""
    server.script(Reply(body))
    [result] = ask(model(server), request())
    assert isinstance(result, ModelError)
    assert result.code == "MODEL_BAD_RESPONSE"


def test_tool_use_blocks_come_back_as_calls(server: Server) -> None:
    """tool_use blocks become ToolCalls with their ids; text beside them is kept."""
    content = [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "tu1", "name": "look", "input": {"q": "x"}},
    ]
    server.script(Reply(message(content, "tool_use")))
    [result] = ask(model(server), request())
    assert result.message.content == "Looking."
    assert result.message.tool_calls == [ToolCall("look", {"q": "x"}, id="tu1")]


@pytest.mark.parametrize(
    ("status", "kind", "code"),
    [
        (400, "invalid_request_error", "MODEL_BAD_REQUEST"),
        (404, "not_found_error", "MODEL_BAD_REQUEST"),
        (413, "request_too_large", "MODEL_BAD_REQUEST"),
        (401, "authentication_error", "MODEL_AUTH"),
        (403, "permission_error", "MODEL_AUTH"),
        (500, "api_error", "MODEL_UNAVAILABLE"),
        (529, "overloaded_error", "MODEL_UNAVAILABLE"),
    ],
)
def test_http_errors_become_codes(server: Server, status: int, kind: str, code: str) -> None:
    """Each HTTP error status is returned as its code with the API's message."""
    server.script(Reply(error_body(kind, "nope"), status=status))
    [result] = ask(model(server), request())
    assert result == ModelError(code, f"anthropic: HTTP {status}: nope")
    assert len(server.requests) == 1


def test_a_rate_limit_carries_the_servers_retry_after(server: Server) -> None:
    """429 is MODEL_RATE_LIMITED with the retry-after in the message."""
    server.script(Reply(error_body("rate_limit_error", "slow"), 429, {"retry-after": "12"}))
    [result] = ask(model(server), request())
    assert result.code == "MODEL_RATE_LIMITED"
    assert retry_after(result) == 12.0


def test_connection_failures_and_timeouts_become_codes(server: Server) -> None:
    """A dropped connection is MODEL_UNAVAILABLE; no answer within timeout is MODEL_TIMEOUT."""
    release = threading.Event()
    server.script(Drop(), Hang(release))
    try:
        dropped, late = ask(model(server, timeout=0.2), request(), request())
    finally:
        release.set()
    assert (dropped.code, late.code) == ("MODEL_UNAVAILABLE", "MODEL_TIMEOUT")


def test_a_stream_sends_deltas_while_the_call_runs_and_assembles_calls(server: Server) -> None:
    """Text deltas arrive before the stream ends; tool input fragments become one call."""
    gate = threading.Event()
    events = stream_of(
        text_block(0, "Let me ", "look."),
        tool_block(1, "tu1", "look", '{"q"', ': "x"}'),
        tool_block(2, "tu2", "ping"),
        stop="tool_use",
    )
    # message_start, ping, block start, first delta: then wait until the delta was seen.
    server.script(Stream(events, gate=gate, after=4))
    deltas = Deltas(first=gate)
    [result] = ask(model(server, stream=True), request(), deltas=deltas)
    assert deltas.texts == ["Let me ", "look."]
    assert result == Response(
        Message(
            role="assistant",
            content="Let me look.",
            tool_calls=[ToolCall("look", {"q": "x"}, "tu1"), ToolCall("ping", {}, "tu2")],
        ),
        usage={"input_tokens": 21, "output_tokens": 9},
        finish_reason="tool_use",
        id="msg_1",
        model="m",
    )
    assert server.bodies()[0]["stream"] is True


def test_a_stream_cut_at_max_tokens_inside_a_call_is_an_error(server: Server) -> None:
    """Tool input left unfinished at max_tokens is TOOL_CALL_INVALID_JSON, never a call."""
    server.script(Stream(stream_of(tool_block(0, "tu1", "look", '{"q": "x'), stop="max_tokens")))
    [result] = ask(model(server, stream=True), request(), deltas=Deltas())
    assert result.code == "TOOL_CALL_INVALID_JSON"
    assert "max_tokens" in result.message


def test_an_error_event_inside_a_stream_becomes_a_code(server: Server) -> None:
    """An ``error`` event mid-stream is returned as the code of its type."""
    start = message([])
    events = [
        event("message_start", message=start),
        *text_block(0, "part"),
        ("error", error_body("overloaded_error", "Overloaded")),
    ]
    server.script(Stream(events))
    deltas = Deltas()
    [result] = ask(model(server, stream=True), request(), deltas=deltas)
    assert result == ModelError("MODEL_UNAVAILABLE", "anthropic: error in the stream: Overloaded")
    assert deltas.texts == ["part"]


def test_a_connection_cut_mid_stream_is_unavailable(server: Server) -> None:
    """A stream whose connection drops before its end gives MODEL_UNAVAILABLE."""
    events = [event("message_start", message=message([])), *text_block(0, "par")]
    server.script(Stream(events, cut=True))
    [result] = ask(model(server, stream=True), request(), deltas=Deltas())
    assert result.code == "MODEL_UNAVAILABLE"


def test_a_stream_that_stops_early_is_a_bad_response(server: Server) -> None:
    """A stream ending before message_stop gives MODEL_BAD_RESPONSE, not a partial reply."""
    server.script(Stream([event("message_start", message=message([])), *text_block(0, "par")]))
    [result] = ask(model(server, stream=True), request(), deltas=Deltas())
    assert result.code == "MODEL_BAD_RESPONSE"


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"model": None}, TypeError),
        ({"max_tokens": 0}, ValueError),
        ({"max_tokens": 1.5}, TypeError),
        ({"timeout": -1}, ValueError),
        ({"system": "x"}, TypeError),
        ({"no_such_parameter": 1}, TypeError),
        ({"client": object()}, TypeError),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, Any], error: type[Exception]) -> None:
    """Settings of the wrong type or value fail when the model is made."""
    settings: dict[str, Any] = {"model": "m", "base_url": "http://127.0.0.1:9", "api_key": "k"}
    settings.update(kwargs)
    if "client" in kwargs:
        del settings["base_url"], settings["api_key"]
    with pytest.raises(error):
        anthropic_model(**settings)


def test_without_the_sdk_the_factory_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """With anthropic not installed, anthropic_model raises ImportError naming the extra."""
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ImportError, match=r"praxo-actors\[anthropic\]"):
        anthropic_model("m", api_key="k")
