"""A call read from text goes to the provider as a call, and its result as a tool result."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _helpers import say
from _model_servers import Reply, Server
from _payloads import completion

from praxo_actors.agent import Tool, arun_agent, new_agent_options, run_agent
from praxo_actors.agent._callids import text_call_id
from praxo_actors.models import (
    Message,
    RunResult,
    message_assistant,
    message_tool,
    message_user,
    session,
)
from praxo_actors.providers import openai_model
from praxo_actors.providers._anthropic_wire import to_messages as anthropic_messages
from praxo_actors.providers._openai_wire import to_messages as openai_messages

BARE = '{"name": "add", "arguments": {"a": 40, "b": 2}}'


@pytest.mark.parametrize("name", [None, "add"])
def test_openai_reads_a_call_left_in_the_text_of_a_history(name: str | None) -> None:
    """[user, assistant '{"name": "add", …}', tool "42"] goes out as a call and its result."""
    history = [message_user("40+2?"), message_assistant(BARE), message_tool(None, name, "42")]
    wire = openai_messages(history)
    assert [m["role"] for m in wire] == ["user", "assistant", "tool"]
    assert wire[1]["content"] is None
    [call] = wire[1]["tool_calls"]
    assert call["function"] == {"name": "add", "arguments": '{"a":40,"b":2}'}
    assert wire[2] == {"role": "tool", "tool_call_id": call["id"], "content": "42"}


def test_openai_keeps_the_prose_around_a_tagged_call() -> None:
    """The prose before the markup is the assistant's content."""
    text = f"Adding.\n<tool_call>{BARE}</tool_call>"
    wire = openai_messages(
        [message_user("x"), message_assistant(text), message_tool(None, None, "42")]
    )
    assert wire[1]["content"] == "Adding."
    assert wire[2]["role"] == "tool" and wire[2]["tool_call_id"] == wire[1]["tool_calls"][0]["id"]


def test_anthropic_reads_a_call_left_in_the_text_of_a_history() -> None:
    """The same history goes to Anthropic as tool_use and tool_result blocks."""
    history = [message_user("40+2?"), message_assistant(BARE), message_tool(None, None, "42")]
    _, turns = anthropic_messages(history)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    [use] = turns[1]["content"]
    assert (use["type"], use["name"], use["input"]) == ("tool_use", "add", {"a": 40, "b": 2})
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": use["id"], "content": "42"}
    ]


def test_a_report_of_malformed_markup_still_answers_no_call() -> None:
    """Malformed markup holds no call: the loop's report goes as user text, as before."""
    history = [
        message_user("x"),
        message_assistant('<tool_call name="add">{"a": 1'),
        Message(role="tool", content='{"error":{"code":"TOOL_CALL_MALFORMED"}}'),
    ]
    wire = openai_messages(history)
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    assert "tool_calls" not in wire[1]


def test_a_text_answer_followed_by_user_text_is_left_alone() -> None:
    """JSON text with no tool result after it is an answer, sent as text."""
    wire = openai_messages([message_user("x"), message_assistant(BARE), message_user("thanks")])
    assert wire[1] == {"role": "assistant", "content": BARE}


def test_a_run_on_text_calls_is_sent_in_native_shape(scripted: Any) -> None:
    """The session a run stores from a bare-JSON call goes out with the run's call id."""
    add = Tool("add", "Add.", {"type": "object"}, lambda a: a["a"] + a["b"])
    result = run_agent(
        new_agent_options(scripted(say(BARE), say("42")), tools=[add]), session("s"), "40+2?"
    )
    stored = result.session.messages
    call_id = stored[1].tool_calls[0].id
    wire = openai_messages(stored)
    assert [m["role"] for m in wire] == ["user", "assistant", "tool", "assistant"]
    assert wire[1]["tool_calls"][0]["id"] == call_id
    assert wire[2]["tool_call_id"] == call_id
    _, turns = anthropic_messages(stored)
    assert turns[1]["content"][0]["id"] == call_id
    assert turns[2]["content"][0]["tool_use_id"] == call_id


def test_calls_an_adapter_reads_from_text_get_the_loops_ids(server: Server) -> None:
    """openai_model(tool_call_format=...) in a run: the calls it reads carry the run's ids."""
    server.script(Reply(completion(BARE)), Reply(completion("42")))
    model = openai_model(
        "m", base_url=f"{server.url}/v1", api_key="sk-test", tool_call_format="llama3_json"
    )
    add = Tool("add", "Add.", {"type": "object"}, lambda a: a["a"] + a["b"])

    async def go() -> RunResult:
        async with model:
            options = new_agent_options(model, tools=[add])
            return await arun_agent(options, session("s"), "40+2?", run_id="r1")

    result = asyncio.run(go())
    [call] = result.session.messages[1].tool_calls
    assert call.id == text_call_id("r1", 1, 0)
    assert result.session.messages[2].tool_call_id == call.id
    sent = server.bodies()[1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["id"] == sent[2]["tool_call_id"] == call.id
