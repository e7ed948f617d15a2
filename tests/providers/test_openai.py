"""openai_model against a loopback server through the real openai SDK: mapping, errors, streams."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

import pytest
from _model_servers import TIMEOUT, Drop, Hang, Reply, Server, Stream
from _payloads import LOOK, Deltas, bound_port, chunk, completion, function_call, request

from praxo_actors import PraxoError
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
from praxo_actors.providers import OpenAIModel, openai_model, retry_after


def model(server: Server, **kwargs: Any) -> OpenAIModel:
    """Return an openai_model on the server."""
    return openai_model("m", base_url=f"{server.url}/v1", api_key="sk-test", **kwargs)


def ask(model: OpenAIModel, *requests: Any) -> list[Any]:
    """Call the model with each request on a fresh loop, closing its client there."""

    async def go() -> list[Any]:
        async with model:
            return [await model(r) for r in requests]

    return asyncio.run(go())


def test_a_text_reply_keeps_its_usage(server: Server) -> None:
    """A completion's text becomes the assistant message; usage is input/output tokens."""
    server.script(Reply(completion("hello there")))
    [result] = ask(model(server), request())
    assert result == Response(
        Message(role="assistant", content="hello there"),
        usage={"input_tokens": 11, "output_tokens": 7},
        finish_reason="stop",
        id="chatcmpl-1",
        model="m",
    )
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"


def test_messages_and_tools_are_sent_in_the_chat_completions_shape(server: Server) -> None:
    """System, user (text and image parts), assistant tool calls and tool results map over."""
    server.script(Reply(completion()))
    messages = [
        message_system("be brief"),
        Message(
            role="user",
            content=[TextBlock("what is this?"), ImageBlock("data:image/png;base64,AAAA")],
            name="ann",
        ),
        message_assistant("let me look", [ToolCall("look", {"q": "ö"}, id="c1")]),
        message_tool("c1", "look", '{"found":true}'),
    ]
    ask(model(server, temperature=0.2, max_tokens=50), request(*messages))
    body = server.bodies()[0]
    assert body["model"] == "m"
    assert (body["temperature"], body["max_tokens"]) == (0.2, 50)
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
            "name": "ann",
        },
        {
            "role": "assistant",
            "content": "let me look",
            "tool_calls": [function_call("c1", "look", '{"q":"ö"}')],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"found":true}'},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "look",
                "description": LOOK.description,
                "parameters": LOOK.parameters,
            },
        }
    ]
    assert "stream" not in body


def test_no_tools_sends_no_tools_key(server: Server) -> None:
    """A request advertising no tools sends no ``tools`` (some servers refuse an empty list)."""
    server.script(Reply(completion()))
    ask(model(server), request(tools=()))
    assert "tools" not in server.bodies()[0]


def test_calls_without_ids_get_wire_ids_their_results_answer(server: Server) -> None:
    """Calls read from text have no id: they go out with ids, and their results name them."""
    server.script(Reply(completion()))
    messages = [
        message_user("go"),
        message_assistant("", [ToolCall("look", {"q": "a"}), ToolCall("look", {"q": "b"})]),
        message_tool(None, "look", "A"),
        message_tool(None, "look", "B"),
        message_assistant("<tool_call>{oops</tool_call>"),
        Message(role="tool", content='{"error":{"code":"TOOL_CALL_INVALID_JSON"}}'),
    ]
    ask(model(server), request(*messages))
    wire = server.bodies()[0]["messages"]
    assert wire[1]["content"] is None
    assert [c["id"] for c in wire[1]["tool_calls"]] == ["call_1_0", "call_1_1"]
    assert [(m["role"], m.get("tool_call_id")) for m in wire[2:4]] == [
        ("tool", "call_1_0"),
        ("tool", "call_1_1"),
    ]
    # A tool message answering no call goes as a user message: the API refuses a lone result.
    assert wire[5] == {"role": "user", "content": '{"error":{"code":"TOOL_CALL_INVALID_JSON"}}'}


def test_tool_calls_come_back_with_decoded_arguments(server: Server) -> None:
    """The server's tool calls become ToolCalls: JSON-string arguments decoded, ids kept."""
    calls = [function_call("c1", "look", '{"q": "x"}'), function_call("c2", "ping", "")]
    server.script(Reply(completion(None, calls, finish_reason="tool_calls")))
    [result] = ask(model(server), request())
    assert result.message.content == ""
    assert result.message.tool_calls == [
        ToolCall("look", {"q": "x"}, id="c1"),
        ToolCall("ping", {}, id="c2"),
    ]


@pytest.mark.parametrize(
    ("arguments", "finish_reason", "code", "words"),
    [
        ('{"q": "x"', "tool_calls", "TOOL_CALL_INVALID_JSON", "not JSON"),
        ('{"q": "x', "length", "TOOL_CALL_INVALID_JSON", "token limit"),
        ('["x"]', "tool_calls", "TOOL_CALL_INVALID_ARGUMENTS", "not an object"),
        ("NaN", "tool_calls", "TOOL_CALL_INVALID_JSON", "not JSON"),
    ],
)
def test_malformed_arguments_are_an_error_never_a_call(
    server: Server, arguments: str, finish_reason: str, code: str, words: str
) -> None:
    """Arguments that are not a JSON object fail the call with a code naming the call."""
    calls = [function_call("c1", "look", arguments)]
    server.script(Reply(completion(None, calls, finish_reason=finish_reason)))
    [result] = ask(model(server), request())
    assert isinstance(result, ModelError)
    assert result.code == code
    assert words in result.message and "'look' (c1)" in result.message


def test_a_nameless_call_is_an_error(server: Server) -> None:
    """A tool call with an empty name fails with TOOL_CALL_INVALID_NAME."""
    server.script(Reply(completion(None, [function_call("c1", "", "{}")])))
    [result] = ask(model(server), request())
    assert (type(result), result.code) == (ModelError, "TOOL_CALL_INVALID_NAME")


def test_a_completion_without_choices_is_a_bad_response(server: Server) -> None:
    """A 200 answer holding no choice is MODEL_BAD_RESPONSE, not an empty reply."""
    server.script(Reply({**completion(), "choices": []}))
    [result] = ask(model(server), request())
    assert result.code == "MODEL_BAD_RESPONSE"


@pytest.mark.parametrize(
    "body", ["a string", {"choices": "nope"}, {"choices": [{"message": None}]}, [1, 2]]
)
def test_an_answer_of_the_wrong_shape_is_a_bad_response(server: Server, body: Any) -> None:
    """A 200 body that is not a completion gives MODEL_BAD_RESPONSE, not an exception."""
    server.script(Reply(body))
    [result] = ask(model(server), request())
    assert isinstance(result, ModelError)
    assert result.code == "MODEL_BAD_RESPONSE"


def test_a_stream_chunk_of_the_wrong_shape_is_a_bad_response(server: Server) -> None:
    """A streamed chunk that is not a chunk gives MODEL_BAD_RESPONSE."""
    server.script(Stream([(None, {"choices": "nope"})]))
    [result] = ask(model(server, stream=True), request())
    assert result.code == "MODEL_BAD_RESPONSE"


def test_an_image_outside_a_user_message_is_a_bad_request(server: Server) -> None:
    """An image in a system message cannot be expressed: MODEL_BAD_REQUEST, nothing sent."""
    bad = Message(role="system", content=[ImageBlock("http://x/y.png")])
    [result] = ask(model(server), request(bad, message_user("hi")))
    assert result.code == "MODEL_BAD_REQUEST"
    assert "image" in result.message
    assert server.requests == []


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, "MODEL_BAD_REQUEST"),
        (404, "MODEL_BAD_REQUEST"),
        (422, "MODEL_BAD_REQUEST"),
        (401, "MODEL_AUTH"),
        (403, "MODEL_AUTH"),
        (408, "MODEL_TIMEOUT"),
        (500, "MODEL_UNAVAILABLE"),
        (502, "MODEL_UNAVAILABLE"),
        (503, "MODEL_UNAVAILABLE"),
    ],
)
def test_http_errors_become_codes(server: Server, status: int, code: str) -> None:
    """Each HTTP error status is returned as its ModelError code, with the server's message."""
    server.script(Reply({"error": {"message": f"failed {status}"}}, status=status))
    [result] = ask(model(server), request())
    assert result == ModelError(code, f"openai: HTTP {status}: failed {status}")
    assert len(server.requests) == 1  # the SDK's own retries are off


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
        ({}, None),
    ],
)
def test_a_rate_limit_carries_the_servers_retry_after(
    server: Server, headers: dict[str, str], seconds: float | None
) -> None:
    """429 is MODEL_RATE_LIMITED; the retry-after header is in the message and readable."""
    server.script(Reply({"error": {"message": "slow down"}}, status=429, headers=headers))
    [result] = ask(model(server), request())
    assert result.code == "MODEL_RATE_LIMITED"
    assert result.message.startswith("openai: HTTP 429: slow down")
    assert retry_after(result) == seconds


def test_a_dropped_connection_is_unavailable(server: Server) -> None:
    """A server that closes the connection without answering gives MODEL_UNAVAILABLE."""
    server.script(Drop())
    [result] = ask(model(server), request())
    assert result.code == "MODEL_UNAVAILABLE"


def test_a_refused_connection_is_unavailable(no_thread_leaks: None) -> None:
    """Nothing listening on the port gives MODEL_UNAVAILABLE."""
    with bound_port() as port:
        pass  # closed again: nothing listens there now
    unbound = openai_model("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k")
    [result] = ask(unbound, request())
    assert result.code == "MODEL_UNAVAILABLE"


def test_no_answer_in_time_is_a_timeout(server: Server) -> None:
    """A server slower than ``timeout`` gives MODEL_TIMEOUT."""
    release = threading.Event()
    server.script(Hang(release))
    try:
        [result] = ask(model(server, timeout=0.2), request())
    finally:
        release.set()
    assert result.code == "MODEL_TIMEOUT"


def test_tool_call_format_none_leaves_markup_in_the_text(server: Server) -> None:
    """Without a tool_call_format the text comes back as written (the loop may parse it)."""
    text = '<tool_call>{"name": "look", "arguments": {"q": "x"}}</tool_call>'
    server.script(Reply(completion(text)))
    [result] = ask(model(server, tool_call_format=None), request())
    assert (result.message.content, result.message.tool_calls) == (text, [])


def test_tool_call_format_reads_calls_from_the_text(server: Server) -> None:
    """With a tool_call_format, calls in the server's text become tool calls; prose stays."""
    text = 'Sure.\n<tool_call>{"name": "look", "arguments": {"q": "x"}}</tool_call>'
    bad = "<tool_call>{not json</tool_call>"
    server.script(Reply(completion(text)), Reply(completion(bad)))
    hermes = model(server, tool_call_format="hermes")
    good, broken = ask(hermes, request(), request())
    assert good.message.tool_calls == [ToolCall("look", {"q": "x"})]
    assert good.message.content.strip() == "Sure."
    assert isinstance(broken, ModelError) and broken.code.startswith("TOOL_CALL_")


def test_an_unknown_tool_call_format_is_refused_at_once() -> None:
    """Naming a format the Core does not read fails when the model is made."""
    with pytest.raises(PraxoError) as info:
        openai_model("m", base_url="http://127.0.0.1:9/v1", api_key="k", tool_call_format="nope")
    assert info.value.code == "TOOL_CALL_UNKNOWN_FORMAT"


def streamed(model: OpenAIModel, deltas: Deltas, *requests: Any) -> list[Any]:
    """Call the model inside a model context whose deltas ``deltas`` records."""

    async def go() -> list[Any]:
        token = enter_model(ModelContext("run_1", "s1", 1, deltas))
        try:
            async with model:
                return [await model(r) for r in requests]
        finally:
            leave_model(token)

    return asyncio.run(go())


def test_a_stream_sends_deltas_while_the_call_runs(server: Server) -> None:
    """Streamed text reaches model.delta before the server has finished the answer."""
    gate = threading.Event()
    events = [
        chunk({"role": "assistant", "content": "Hel"}),
        chunk({"content": "lo"}, "stop"),
        chunk(None, usage={"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}),
        (None, "[DONE]"),
    ]
    # The server holds the rest of the stream until the first delta has been seen.
    server.script(Stream(events, gate=gate, after=1))
    deltas = Deltas(first=gate)
    [result] = streamed(model(server, stream=True), deltas, request())
    assert deltas.texts == ["Hel", "lo"]
    assert result == Response(
        Message(role="assistant", content="Hello"),
        usage={"input_tokens": 3, "output_tokens": 2},
        finish_reason="stop",
        id="c",
        model="m",
    )
    body = server.bodies()[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_a_stream_assembles_tool_calls_from_fragments(server: Server) -> None:
    """Tool-call fragments (name, id, argument pieces) are put back together in order."""
    first = {"index": 0, "id": "c1", "type": "function", "function": {"name": "look"}}
    second = {"index": 1, "id": "c2", "type": "function", "function": {"name": "ping"}}
    events = [
        chunk({"role": "assistant", "tool_calls": [first]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": '}}]}),
        chunk({"tool_calls": [second, {"index": 0, "function": {"arguments": '"x"}'}}]}),
        chunk({}, "tool_calls"),
        (None, "[DONE]"),
    ]
    server.script(Stream(events))
    [result] = streamed(model(server, stream=True), Deltas(), request())
    assert result.message.tool_calls == [
        ToolCall("look", {"q": "x"}, id="c1"),
        ToolCall("ping", {}, id="c2"),
    ]
    assert result.usage is None  # the server sent none


def test_a_stream_cut_inside_arguments_is_an_error(server: Server) -> None:
    """Arguments still open when the stream ends at its limit are TOOL_CALL_INVALID_JSON."""
    start = {"index": 0, "id": "c1", "type": "function", "function": {"name": "look"}}
    events = [
        chunk({"tool_calls": [start]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": "x'}}]}, "length"),
        (None, "[DONE]"),
    ]
    server.script(Stream(events))
    [result] = streamed(model(server, stream=True), Deltas(), request())
    assert result.code == "TOOL_CALL_INVALID_JSON"
    assert "token limit" in result.message


def test_an_error_inside_a_stream_becomes_a_code(server: Server) -> None:
    """An error object in the stream is returned with the code of its type."""
    events = [
        chunk({"content": "par"}),
        (None, {"error": {"message": "too many", "type": "rate_limit_error"}}),
    ]
    server.script(Stream(events), Stream([(None, "[DONE]")]))
    deltas = Deltas()
    limited, empty = streamed(model(server, stream=True), deltas, request(), request())
    assert limited.code == "MODEL_RATE_LIMITED"
    assert deltas.texts == ["par"]
    assert empty.code == "MODEL_BAD_RESPONSE"  # a stream with no chunk at all


def test_a_connection_cut_mid_stream_is_unavailable(server: Server) -> None:
    """A stream whose connection drops before its end gives MODEL_UNAVAILABLE."""
    server.script(Stream([chunk({"content": "par"})], cut=True))
    deltas = Deltas()
    [result] = streamed(model(server, stream=True), deltas, request())
    assert result.code == "MODEL_UNAVAILABLE"
    assert deltas.texts == ["par"]


def test_a_stream_refused_with_a_status_becomes_its_code(server: Server) -> None:
    """A streamed request answered 401 is MODEL_AUTH, like an unstreamed one."""
    server.script(Reply({"error": {"message": "bad key"}}, status=401))
    [result] = streamed(model(server, stream=True), Deltas(), request())
    assert result.code == "MODEL_AUTH"


def test_streaming_outside_a_run_just_returns_the_response(server: Server) -> None:
    """With no model context (a direct call) a stream still returns the whole response."""
    server.script(Stream([chunk({"content": "ok"}, "stop"), (None, "[DONE]")]))
    [result] = ask(model(server, stream=True), request())
    assert result.message.content == "ok"


def test_one_model_serves_several_event_loops(server: Server) -> None:
    """Each loop calling the model gets a client of its own; each is closed on its loop."""
    shared = model(server)
    server.script(Reply(completion("one")), Reply(completion("two")))
    assert ask(shared, request())[0].message.content == "one"
    assert ask(shared, request())[0].message.content == "two"


def test_close_closes_a_client_from_outside_its_running_loop(server: Server) -> None:
    """close() from another thread closes the client of a loop running elsewhere."""
    shared = model(server)
    server.script(Reply(completion("one")))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever)
    thread.start()
    try:
        result = asyncio.run_coroutine_threadsafe(shared(request()), loop).result(TIMEOUT)
        assert result.message.content == "one"
        shared.close()
        assert shared._clients._by_loop.get(loop) is None
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(TIMEOUT)
        loop.close()


def test_a_given_client_is_used_as_it_is(server: Server) -> None:
    """``client=`` is used for every call and left open for its owner."""
    import openai

    async def go() -> Any:
        async with openai.AsyncOpenAI(
            base_url=f"{server.url}/v1", api_key="mine", max_retries=0
        ) as client:
            given = openai_model("m", client=client)
            result = await given(request())
            await given.aclose()  # leaves the caller's client open
            assert not client.is_closed()
            return result

    server.script(Reply(completion("via mine")))
    assert asyncio.run(go()).message.content == "via mine"
    assert server.requests[0].headers["authorization"] == "Bearer mine"


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"model": 3}, TypeError),
        ({"model": ""}, ValueError),
        ({"stream": "yes"}, TypeError),
        ({"timeout": 0}, ValueError),
        ({"timeout": float("inf")}, ValueError),
        ({"timeout": "1"}, TypeError),
        ({"messages": []}, TypeError),
        ({"tools": []}, TypeError),
        ({"no_such_parameter": 1}, TypeError),
        ({"client": object()}, TypeError),
        ({"tool_call_format": 1}, TypeError),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, Any], error: type[Exception]) -> None:
    """Settings of the wrong type or value fail when the model is made."""
    settings: dict[str, Any] = {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "k"}
    settings.update(kwargs)
    if "client" in kwargs:
        del settings["base_url"], settings["api_key"]
    with pytest.raises(error):
        openai_model(**settings)


def test_a_client_and_a_url_together_are_refused() -> None:
    """Passing a client and base_url/api_key is ambiguous: ValueError."""
    with pytest.raises(ValueError, match="not both"):
        openai_model("m", client=object(), api_key="k")


def test_no_api_key_is_model_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without api_key or OPENAI_API_KEY the factory fails with MODEL_AUTH."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(PraxoError) as info:
        openai_model("m", base_url="http://127.0.0.1:9/v1")
    assert info.value.code == "MODEL_AUTH"


def test_without_the_sdk_the_factory_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """With openai not installed, openai_model raises ImportError naming the extra."""
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ImportError, match=r"pip install 'praxo-actors\[openai\]'") as info:
        openai_model("m", api_key="k")
    assert info.value.name == "openai"
