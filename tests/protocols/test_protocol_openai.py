"""The OpenAI-compatible app over real HTTP, driven by the official ``openai`` client."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest
from _helpers import assert_no_new_threads
from _served import TIMEOUT, served

from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.middleware import require_approval
from praxo_actors.models import ModelError, Request, Response, ToolCall, message_assistant
from praxo_actors.protocols import openai_app
from praxo_actors.runtime import Runtime
from praxo_actors.testing import FunctionModel

USAGE = {"input_tokens": 7, "output_tokens": 3}


def chat(request: Request) -> Response | ModelError:
    """Add when asked (saying so first), fail on "fail", else tell what the model saw."""
    last = request.messages[-1]
    if last.role == "tool":
        return Response(message_assistant(f"The sum is {last.content}."), usage=USAGE)
    if last.content == "fail":
        return ModelError("MODEL_UNAVAILABLE", "the model is down")
    if last.content == "boom":
        raise RuntimeError("a bug in the model callback")
    if last.content == "add as text":  # a call the loop reads from the text
        text = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
        return Response(message_assistant(text), usage=USAGE)
    if last.content == "add":
        call = ToolCall("add", {"a": 2, "b": 3}, id="c1")
        return Response(message_assistant("Thinking aloud.", [call]), usage=USAGE)
    seen = " | ".join(f"{m.role}:{m.content}" for m in request.messages)
    return Response(message_assistant(seen), usage=USAGE)


def options(approval: bool = False) -> Any:
    add = Tool("add", "Add two numbers", {"type": "object"}, lambda a: a["a"] + a["b"])
    gate = require_approval(["add"]) if approval else None
    return new_agent_options(FunctionModel(chat), tools=[add], approval=gate)


@dataclass
class Served:
    runtime: Runtime
    url: str
    client: openai.OpenAI


@pytest.fixture
def app() -> Iterator[Served]:
    """Serve the agents "helper" and "careful" over the OpenAI API; stop all after."""
    before = set(threading.enumerate())
    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    try:
        runtime.register_agent("helper", options)
        runtime.register_agent("careful", lambda: options(approval=True))
        with served(openai_app(runtime)) as url:
            client = openai.OpenAI(
                base_url=url + "/v1", api_key="unused", timeout=TIMEOUT, max_retries=0
            )
            with client:
                yield Served(runtime, url, client)
    finally:
        runtime.stop()
    assert_no_new_threads(before, TIMEOUT)


def test_models_lists_the_registered_agents(app: Served) -> None:
    """GET /v1/models names every registered agent."""
    assert sorted(m.id for m in app.client.models.list()) == ["careful", "helper"]


def test_a_blocking_completion_answers_with_the_final_text_only(app: Served) -> None:
    """The text of a tool-calling step is not part of the answer; usage sums the run's."""
    done = app.client.chat.completions.create(
        model="helper", messages=[{"role": "user", "content": "add"}]
    )
    assert done.choices[0].message.content == "The sum is 5."
    assert done.choices[0].finish_reason == "stop"
    assert done.model == "helper"
    assert done.usage is not None
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (14, 6)
    assert done.usage.total_tokens == 20


def test_a_streamed_completion_ends_with_usage_when_asked(app: Served) -> None:
    """stream=True gives the answer in chunks, then a chunk with the usage and no choices."""
    chunks = list(
        app.client.chat.completions.create(
            model="helper",
            messages=[{"role": "user", "content": "add"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "The sum is 5."
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == 20
    texts = list(
        app.client.chat.completions.create(
            model="helper", messages=[{"role": "user", "content": "add as text"}], stream=True
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in texts) == "The sum is 5."
    without = list(
        app.client.chat.completions.create(
            model="helper", messages=[{"role": "user", "content": "hi"}], stream=True
        )
    )
    assert all(c.usage is None for c in without)


def test_the_session_keeps_the_conversation(app: Served) -> None:
    """With ``user`` (or X-Praxo-Session) the stored history is the conversation: only the
    request's last message is new input."""
    ask = app.client.chat.completions.create
    ask(model="helper", messages=[{"role": "user", "content": "first"}], user="ada")
    ignored = {"role": "assistant", "content": "a client's own copy, not sent on"}
    second = ask(
        model="helper", messages=[ignored, {"role": "user", "content": "second"}], user="ada"
    )
    assert second.choices[0].message.content == ("user:first | assistant:user:first | user:second")
    third = ask(
        model="helper",
        messages=[{"role": "user", "content": "third"}],
        extra_headers={"X-Praxo-Session": "ada"},
    )
    assert third.choices[0].message.content.endswith("user:second | user:third")
    assert len(app.runtime.session("ada", "helper").history()) == 6


def test_without_a_session_the_earlier_messages_are_the_context(app: Served) -> None:
    """A request without a session runs in a new one, its earlier messages given to the model."""
    reply = app.client.chat.completions.with_raw_response.create(
        model="helper",
        messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": "uno"},
            {"role": "user", "content": [{"type": "text", "text": "two"}]},
        ],
    )
    done = reply.parse()
    assert done.choices[0].message.content == (
        "system:be brief | user:one | assistant:uno | user:two"
    )
    session = reply.headers["x-praxo-session"]
    stored = app.runtime.session(session, "helper").history()
    assert [m.content for m in stored] == ["two", done.choices[0].message.content]


def test_a_failed_run_is_an_openai_error_with_its_code(app: Served) -> None:
    """A run that fails is an error body carrying its code; the client does not retry it."""
    with pytest.raises(openai.InternalServerError) as failed:
        app.client.with_options(max_retries=2).chat.completions.create(
            model="helper", messages=[{"role": "user", "content": "fail"}]
        )
    assert failed.value.code == "MODEL_UNAVAILABLE"
    assert failed.value.response.headers["x-should-retry"] == "false"
    with pytest.raises(openai.APIError) as streamed:
        list(
            app.client.chat.completions.create(
                model="helper", messages=[{"role": "user", "content": "fail"}], stream=True
            )
        )
    assert streamed.value.code == "MODEL_UNAVAILABLE"


def test_a_callback_that_raises_is_an_error_with_its_code(app: Served) -> None:
    """A model callback's exception is 500 AGENT_CALLBACK_EXCEPTION, blocking and streamed."""
    with pytest.raises(openai.InternalServerError) as failed:
        app.client.chat.completions.create(
            model="helper", messages=[{"role": "user", "content": "boom"}]
        )
    assert failed.value.code == "AGENT_CALLBACK_EXCEPTION"
    assert "RuntimeError" in failed.value.message
    with pytest.raises(openai.APIError) as streamed:
        list(
            app.client.chat.completions.create(
                model="helper", messages=[{"role": "user", "content": "boom"}], stream=True
            )
        )
    assert streamed.value.code == "AGENT_CALLBACK_EXCEPTION"


def test_an_unknown_model_is_404(app: Served) -> None:
    """A model no agent is registered as is 404 RUNTIME_UNKNOWN_AGENT."""
    with pytest.raises(openai.NotFoundError) as unknown:
        app.client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
    assert unknown.value.code == "RUNTIME_UNKNOWN_AGENT"


def test_a_run_that_waits_for_approval_is_409(app: Served) -> None:
    """A run that stops for a person is 409 PROTOCOL_RUN_INTERRUPTED (OpenAI has no such state)."""
    with pytest.raises(openai.ConflictError) as waiting:
        app.client.chat.completions.create(
            model="careful", messages=[{"role": "user", "content": "add"}], user="bo"
        )
    assert waiting.value.code == "PROTOCOL_RUN_INTERRUPTED"
    assert app.runtime.inspect("bo").pending_interrupt["approval"]["tool"] == "add"


@pytest.mark.parametrize(
    ("content", "headers", "status", "code"),
    [
        (b"{not json", {}, 400, "PROTOCOL_BAD_JSON"),
        (b"[" * 100_000, {}, 400, "PROTOCOL_BAD_JSON"),
        (b"[]", {}, 400, "PROTOCOL_INVALID_INPUT"),
        (b'{"model": "helper"}', {}, 400, "PROTOCOL_INVALID_INPUT"),
        (b'{"model": "helper", "messages": [1]}', {}, 400, "PROTOCOL_INVALID_INPUT"),
        (
            b'{"model": "helper", "messages": [{"role": "wizard", "content": "x"}]}',
            {},
            400,
            "PROTOCOL_INVALID_INPUT",
        ),
        (
            b'{"model": "helper", "messages": [{"role": "user", "content": {"a": 1}}]}',
            {},
            400,
            "PROTOCOL_INVALID_INPUT",
        ),
        (
            b'{"model": "helper", "messages": [{"role": "assistant", "content": "x"}]}',
            {},
            400,
            "PROTOCOL_INVALID_INPUT",
        ),
        (
            b'{"model": "helper", "stream": "yes", "messages": [{"role": "user", "content": "x"}]}',
            {},
            400,
            "PROTOCOL_INVALID_INPUT",
        ),
        (
            b'{"model": "helper", "user": "", "messages": [{"role": "user", "content": "x"}]}',
            {"X-Praxo-Session": "\x7f"},
            200,
            None,
        ),
        (
            b'{"model": "helper", "messages": [{"role": "user", "content": "x"}]}',
            {"Host": "evil.example"},
            421,
            "PROTOCOL_HOST_REFUSED",
        ),
    ],
)
def test_hostile_input_is_a_4xx_with_a_code(
    app: Served, content: bytes, headers: dict[str, str], status: int, code: str | None
) -> None:
    """Malformed, misshapen, deeply nested or foreign-host requests: 4xx and a code."""
    reply = httpx.post(
        app.url + "/v1/chat/completions", content=content, headers=headers, timeout=TIMEOUT
    )
    assert reply.status_code == status, reply.text
    if code is not None:
        assert reply.json()["error"]["code"] == code
