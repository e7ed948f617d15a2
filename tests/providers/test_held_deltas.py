"""A call written as text is not streamed as assistant text while tools are offered."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _model_servers import Server, Stream
from _payloads import Deltas, chunk, request

from praxo_actors.agent import ModelContext
from praxo_actors.agent._context import enter_model, leave_model
from praxo_actors.models import ModelError, Response, ToolCall, message_assistant
from praxo_actors.providers import openai_model
from praxo_actors.providers._held import HeldDeltas

BARE = '{"name": "add", "arguments": {"a": 1, "b": 2}}'


def feed(pieces: list[str], reply: Any, *, active: bool = True) -> list[str]:
    """Stream ``pieces`` through a gate, finish it with ``reply``; return what was sent."""
    sent: list[str] = []
    held = HeldDeltas(sent.append, active)
    for piece in pieces:
        held.add(piece)
    held.finish(reply)
    return sent


def answer(text: str, *calls: ToolCall) -> Response:
    return Response(message_assistant(text, calls))


def test_a_bare_json_call_sends_nothing() -> None:
    """A reply that is one call read from text streams no text at all."""
    pieces = ['{"name": "add", ', '"arguments": {"a": 1, "b": 2}}']
    assert feed(pieces, answer("".join(pieces))) == []


def test_prose_before_a_tagged_call_is_sent_and_the_markup_is_not() -> None:
    """The prose streams as it comes; the markup after it is held and dropped."""
    pieces = ["Let me add", " them.\n<tool", f"_call>{BARE}</tool_call>"]
    assert "".join(feed(pieces, answer("".join(pieces)))) == "Let me add them."


def test_calls_the_adapter_read_keep_its_prose() -> None:
    """A reply whose calls the adapter read keeps the adapter's prose as the text sent."""
    pieces = ["Adding. ", BARE, " Done soon."]
    reply = answer("Adding. Done soon.", ToolCall("add", {"a": 1, "b": 2}))
    assert "".join(feed(pieces, reply)) == "Adding. Done soon."


@pytest.mark.parametrize(
    "pieces",
    [
        ["The set ", "{1, 2}", " has two members."],
        ["[1, 2, 3]", " are the numbers."],
        ["Use <b>bold</b>", " here."],
        ["plain text, ", "nothing held"],
    ],
)
def test_an_answer_without_calls_is_sent_whole(pieces: list[str]) -> None:
    """Held text that holds no call is sent at the end: the deltas make up the answer."""
    text = "".join(pieces)
    assert "".join(feed(pieces, answer(text))) == text


def test_nothing_is_held_without_tools() -> None:
    """Offered no tools, every piece is sent as it comes, markup or not."""
    pieces = ['{"name": "add", ', '"arguments": {}}']
    assert feed(pieces, answer("".join(pieces)), active=False) == pieces


def test_a_failed_stream_sends_what_it_held() -> None:
    """A stream that ends in an error sends the held text (nothing is lost)."""
    assert feed(["so {", "x"], ModelError("MODEL_UNAVAILABLE")) == ["so", " {x"]


def test_openai_model_streams_no_call_written_as_text(server: Server) -> None:
    """Through the real SDK: a bare-JSON call streams no delta; the reply keeps the text."""
    halves = [BARE[:20], BARE[20:]]
    events = [
        chunk({"role": "assistant", "content": halves[0]}),
        chunk({"content": halves[1]}, "stop"),
        (None, "[DONE]"),
    ]
    server.script(Stream(events))
    deltas = Deltas()
    model = openai_model("m", base_url=f"{server.url}/v1", api_key="sk-test", stream=True)

    async def go() -> Any:
        token = enter_model(ModelContext("run_1", "s1", 1, deltas))
        try:
            async with model:
                return await model(request())
        finally:
            leave_model(token)

    reply = asyncio.run(go())
    assert isinstance(reply, Response) and reply.message.content == BARE
    assert deltas.texts == []
