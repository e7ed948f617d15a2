"""A tool call read from a model's text is stored, counted and answered like a native one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _helpers import Events, say

from praxo_actors.agent import ListJournal, Tool, new_agent_options, run_agent
from praxo_actors.models import Request, Response, ToolCall, session

BARE = '{"name": "add", "arguments": {"a": 2, "b": 40}}'


def add_tool(seen: list[dict[str, Any]] | None = None) -> Tool:
    def add(arguments: dict[str, Any]) -> int:
        if seen is not None:
            seen.append(arguments)
        return int(arguments["a"]) + int(arguments["b"])

    return Tool("add", "Add two numbers.", {"type": "object"}, add)


def test_a_bare_json_call_is_stored_with_an_id_and_answered_by_it(scripted: Any) -> None:
    """The assistant message carries the call (no markup as text); the tool message names its id."""
    seen: list[dict[str, Any]] = []
    model = scripted(say(BARE), say("42"))
    result = run_agent(new_agent_options(model, tools=[add_tool(seen)]), session("s"), "2+40?")
    assert seen == [{"a": 2, "b": 40}]
    asked, answer = result.session.messages[1:3]
    assert asked.role == "assistant" and asked.content == ""
    [call] = asked.tool_calls
    assert (call.name, call.arguments) == ("add", {"a": 2, "b": 40})
    assert call.id is not None and call.id.startswith("call_")
    assert (answer.role, answer.tool_call_id, answer.content) == ("tool", call.id, "42")
    assert model.requests[1].messages[1:3] == [asked, answer]


def test_the_prose_around_the_markup_is_the_stored_text(scripted: Any) -> None:
    """Prose before a tagged call stays as the assistant message's text."""
    text = 'Let me add them.\n<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'
    model = scripted(say(text), say("3"))
    result = run_agent(new_agent_options(model, tools=[add_tool()]), session("s"), "1+2?")
    asked = result.session.messages[1]
    assert asked.content == "Let me add them."
    assert [c.name for c in asked.tool_calls] == ["add"]


def test_ids_are_derived_from_run_step_and_place(scripted: Any) -> None:
    """Two calls of one step get two ids; the same run id gives the same ids again."""
    two = f"[{BARE}, {BARE}]"

    def ids(run_id: str) -> list[str | None]:
        model = scripted(say(two), say("done"))
        result = run_agent(
            new_agent_options(model, tools=[add_tool()]), session("s"), "x", run_id=run_id
        )
        return [c.id for c in result.session.messages[1].tool_calls]

    first = ids("r1")
    assert len(set(first)) == 2 and None not in first
    assert ids("r1") == first
    assert set(ids("r2")).isdisjoint(first)


def test_model_responded_counts_calls_read_from_text(scripted: Any) -> None:
    """model.responded reports the calls read from the text, and the prose as content."""
    events = Events()
    model = scripted(say(BARE), say("42"))
    options = new_agent_options(model, tools=[add_tool()], sink=events)
    run_agent(options, session("s"), "x")
    responded = [e.data for e in events if e.type == "model.responded"]
    assert [(d["tool_calls"], d["content"]) for d in responded] == [(1, ""), (0, "42")]
    started = [e.data["id"] for e in events if e.type == "tool.started"]
    completed = [e.data["id"] for e in events if e.type == "tool.completed"]
    assert started == completed and started[0] is not None


class PowerCut(BaseException):
    """Stands for the process dying after the tool ran."""


def test_a_replayed_run_keeps_the_ids(scripted: Any) -> None:
    """A journaled run resumed after a crash stores the same ids as the run before it."""
    cut = [True]
    script = scripted(say(BARE), say("42"))
    sent: list[str | None] = []

    def model(request: Request) -> Response:
        if request.step == 2 and cut[0]:
            cut[0] = False
            sent.append(request.messages[1].tool_calls[0].id)
            raise PowerCut
        reply: Response = script(request)
        return reply

    seen: list[dict[str, Any]] = []
    options = new_agent_options(model, tools=[add_tool(seen)])
    journal = ListJournal()
    with pytest.raises(PowerCut):
        run_agent(options, session("s"), "x", run_id="r1", journal=journal)
    result = run_agent(options, session("s"), "x", run_id="r1", journal=journal)
    assert len(seen) == 1  # replayed, not called again
    call = result.session.messages[1].tool_calls[0]
    assert sent == [call.id] and result.session.messages[2].tool_call_id == call.id


def test_parsing_off_keeps_the_text(scripted: Any) -> None:
    """parse_text_tool_calls=False keeps 0.1's behaviour: the markup is the answer."""
    model = scripted(say(BARE))
    options = new_agent_options(model, tools=[add_tool()], parse_text_tool_calls=False)
    result = run_agent(options, session("s"), "x")
    assert result.output == BARE and result.session.messages[1].tool_calls == []


def test_malformed_markup_is_reported_as_before(scripted: Any) -> None:
    """Malformed markup stays the text of the reply; the loop's report names no call."""
    model = scripted(say('<tool_call name="add">{"a": 1'), say("sorry"))
    result = run_agent(new_agent_options(model, tools=[add_tool()]), session("s"), "x")
    report = result.session.messages[2]
    assert report.role == "tool" and report.tool_call_id is None
    assert isinstance(report.content, str)
    assert json.loads(report.content)["error"]["code"] == "TOOL_CALL_MALFORMED"
    assert result.session.messages[1].tool_calls == []


def test_native_calls_keep_their_ids(scripted: Any) -> None:
    """A call the model sent natively is stored as it came."""
    model = scripted(say("", ToolCall("add", {"a": 1, "b": 1}, "c9")), say("2"))
    result = run_agent(new_agent_options(model, tools=[add_tool()]), session("s"), "x")
    assert result.session.messages[1].tool_calls[0].id == "c9"
    assert result.session.messages[2].tool_call_id == "c9"
