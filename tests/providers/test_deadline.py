"""``timeout`` bounds a provider's whole call, against servers that never finish their answer.

Each server here sends a byte or an event well within the HTTP client's per-read limit, so
only a deadline around the call can end it; pytest's timeout bounds the test.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _model_servers import Endless, Reply, Server, Stream, Trickle
from _payloads import Deltas, chunk, completion, event, message, request, stream_of, text_block

from praxo_actors.agent import ModelContext
from praxo_actors.agent._context import enter_model, leave_model
from praxo_actors.models import ModelError
from praxo_actors.providers import anthropic_model, openai_model

DEADLINE = 0.5  # seconds; every server below sends something each 0.05 s

OPENAI_TEXT = chunk({"content": "x"})
ANTHROPIC_START = [
    event("message_start", message=message([])),
    event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
]
ANTHROPIC_TEXT = event("content_block_delta", index=0, delta={"type": "text_delta", "text": "x"})

CASES = [
    pytest.param("openai", False, Trickle("headers"), id="openai-headers-byte-by-byte"),
    pytest.param("openai", False, Trickle("body"), id="openai-body-byte-by-byte"),
    pytest.param("openai", True, Trickle("body", events=True), id="openai-stream-byte-by-byte"),
    pytest.param("openai", True, Endless(OPENAI_TEXT), id="openai-endless-stream"),
    pytest.param("anthropic", False, Trickle("headers"), id="anthropic-headers-byte-by-byte"),
    pytest.param("anthropic", False, Trickle("body"), id="anthropic-body-byte-by-byte"),
    pytest.param(
        "anthropic", True, Trickle("body", events=True), id="anthropic-stream-byte-by-byte"
    ),
    pytest.param(
        "anthropic",
        True,
        Endless(ANTHROPIC_TEXT, first=ANTHROPIC_START),
        id="anthropic-endless-stream",
    ),
]


def make(provider: str, server: Server, **kwargs: Any) -> Any:
    """Return the provider's model on the server."""
    if provider == "openai":
        return openai_model("m", base_url=f"{server.url}/v1", api_key="sk-test", **kwargs)
    return anthropic_model("m", base_url=server.url, api_key="sk-ant", **kwargs)


def good_reply(provider: str, stream: bool) -> Reply | Stream:
    """Return a whole, well-formed answer of the provider, streamed or not."""
    if provider == "openai":
        if stream:
            return Stream([chunk({"content": "ok"}, "stop"), (None, "[DONE]")])
        return Reply(completion("ok"))
    if stream:
        return Stream(stream_of(text_block(0, "ok")))
    return Reply(message([{"type": "text", "text": "ok"}]))


def ask(model: Any, deltas: Deltas, *requests: Any) -> list[Any]:
    """Call the model with each request on a fresh loop, in a model context with ``deltas``."""

    async def go() -> list[Any]:
        token = enter_model(ModelContext("run_1", "s1", 1, deltas))
        try:
            async with model:
                return [await model(r) for r in requests]
        finally:
            leave_model(token)

    return asyncio.run(go())


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("provider", "stream", "stalling"), CASES)
def test_an_answer_that_never_ends_is_cut_at_the_deadline(
    server: Server, provider: str, stream: bool, stalling: Trickle | Endless
) -> None:
    """A server that keeps sending but never finishes gives MODEL_TIMEOUT; the next call on
    the same model gets its answer."""
    server.script(stalling, good_reply(provider, stream))
    deltas = Deltas()
    late, after = ask(
        make(provider, server, stream=stream, timeout=DEADLINE), deltas, request(), request()
    )
    assert late == ModelError("MODEL_TIMEOUT", f"{provider}: no whole answer within 0.5 s")
    assert after.message.content == "ok"
    if isinstance(stalling, Endless):  # the stream was read as it came, up to the deadline
        assert len(deltas.texts) > 2 and set(deltas.texts[:-1]) == {"x"}
    assert deltas.texts[-1:] == (["ok"] if stream else [])
