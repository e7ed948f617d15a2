"""Tool arguments are checked against the tool's schema before its handler runs."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from _helpers import Events, say

from praxo_actors.agent import (
    AgentError,
    ListJournal,
    Tool,
    arun_agent,
    new_agent_options,
    resume_agent,
    run_agent,
)
from praxo_actors.core._schema_compile import Compiler
from praxo_actors.middleware import call_limit, require_approval
from praxo_actors.models import ToolCall, session

SEND = {
    "type": "object",
    "properties": {"to": {"type": "string"}},
    "required": ["to"],
}


def recording_tool(seen: list[dict[str, Any]]) -> Tool:
    def send(arguments: dict[str, Any]) -> Any:
        seen.append(arguments)
        return "sent"

    return Tool("send", "Send a message.", SEND, send)


def tool_messages(result: Any) -> list[Any]:
    """Return the run's tool messages, decoded when they hold JSON."""
    out = []
    for message in result.session.messages:
        if message.role == "tool":
            try:
                out.append(json.loads(message.content))
            except ValueError:
                out.append(message.content)
    return out


def test_a_call_whose_arguments_break_the_schema_never_reaches_the_handler(
    scripted: Any,
) -> None:
    """``{"to": 5}`` for a string ``to`` is answered with TOOL_CALL_INVALID_ARGUMENTS."""
    seen: list[dict[str, Any]] = []
    model = scripted(say("", ToolCall("send", {"to": 5}, id="c1")), say("sorry"))
    result = run_agent(new_agent_options(model, tools=[recording_tool(seen)]), session("s"), "x")
    assert seen == []
    assert tool_messages(result) == [
        {
            "error": {
                "code": "TOOL_CALL_INVALID_ARGUMENTS",
                "message": "/to: expected string, got integer",
            }
        }
    ]
    assert result.output == "sorry" and result.tool_calls == 1


def test_the_handler_is_not_called_until_the_model_corrects_itself(scripted: Any) -> None:
    """The error goes back to the model; its corrected call runs."""
    seen: list[dict[str, Any]] = []
    model = scripted(
        say("", ToolCall("send", {"to": 5}, id="c1")),
        say("", ToolCall("send", {"to": "ada"}, id="c2")),
        say("done"),
    )
    result = run_agent(new_agent_options(model, tools=[recording_tool(seen)]), session("s"), "x")
    assert seen == [{"to": "ada"}]
    assert tool_messages(result)[1] == "sent"
    request = model.requests[1]
    assert request.messages[-1].tool_call_id == "c1"
    assert "TOOL_CALL_INVALID_ARGUMENTS" in request.messages[-1].content


def test_every_error_is_named_with_its_path(scripted: Any) -> None:
    """A missing property is reported at the object, a wrong one at its own path."""
    schema = {
        "type": "object",
        "properties": {
            "to": {"type": "string"},
            "cc": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["to", "subject"],
        "additionalProperties": False,
    }
    model = scripted(say("", ToolCall("mail", {"cc": ["a", 2], "bcc": []})), say("ok"))
    tools = [Tool("mail", "", schema, lambda args: pytest.fail("the handler ran"))]
    result = run_agent(new_agent_options(model, tools=tools), session("s"), "x")
    assert tool_messages(result)[0]["error"]["message"] == (
        "/: missing required property 'to'; /: missing required property 'subject'; "
        "/: property 'bcc' is not allowed; /cc/1: expected string, got integer"
    )


def test_at_most_ten_errors_are_sent(scripted: Any) -> None:
    """Beyond ten errors the message says how many more there are."""
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    arguments = {f"k{i:02}": "x" for i in range(13)}
    model = scripted(say("", ToolCall("t", arguments)), say("ok"))
    tools = [Tool("t", "", schema, lambda args: pytest.fail("the handler ran"))]
    result = run_agent(new_agent_options(model, tools=tools), session("s"), "x")
    message = tool_messages(result)[0]["error"]["message"]
    assert message.count("expected integer") == 10 and message.endswith("; and 3 more")


def test_an_invalid_call_counts_against_the_tool_budget(scripted: Any) -> None:
    """The refused call spends the budget: the next call fails the run with the limit."""
    seen: list[dict[str, Any]] = []
    model = scripted(
        say("", ToolCall("send", {"to": 5})),
        say("", ToolCall("send", {"to": "ada"})),
    )
    options = new_agent_options(model, tools=[recording_tool(seen)], call_limit=call_limit(0, 1))
    with pytest.raises(AgentError) as failed:
        run_agent(options, session("s"), "x")
    assert failed.value.code == "AGENT_TOOL_CALL_LIMIT" and seen == []


def test_an_invalid_call_is_started_and_completed_with_its_error(
    scripted: Any, events: Events
) -> None:
    """``tool.started`` and ``tool.completed`` (``error`` the code) bracket the refused call."""
    model = scripted(say("", ToolCall("send", {"to": 5}, id="c1")), say("ok"))
    options = new_agent_options(model, tools=[recording_tool([])], sink=events)
    run_agent(options, session("s"), "x")
    started, completed = (e for e in events if e.type.startswith("tool."))
    assert started.data["arguments"] == {"to": 5}
    assert completed.data["error"] == "TOOL_CALL_INVALID_ARGUMENTS"
    assert json.loads(completed.data["output"])["error"]["message"] == (
        "/to: expected string, got integer"
    )


def test_unchecked_arguments_reach_the_handler_when_asked(scripted: Any) -> None:
    """``validate_tool_arguments=False`` hands the model's arguments over as they are."""
    seen: list[dict[str, Any]] = []
    model = scripted(say("", ToolCall("send", {"to": 5})), say("ok"))
    options = new_agent_options(model, tools=[recording_tool(seen)], validate_tool_arguments=False)
    result = run_agent(options, session("s"), "x")
    assert seen == [{"to": 5}] and tool_messages(result) == ["sent"]


def test_calls_written_as_text_are_checked_too(scripted: Any) -> None:
    """A call parsed from the model's text meets the same check."""
    seen: list[dict[str, Any]] = []
    model = scripted(say('<tool_call name="send">{"to": [1]}</tool_call>'), say("ok"))
    result = run_agent(new_agent_options(model, tools=[recording_tool(seen)]), session("s"), "x")
    assert seen == []
    assert tool_messages(result)[0]["error"]["code"] == "TOOL_CALL_INVALID_ARGUMENTS"


def test_a_broken_schema_fails_closed(scripted: Any) -> None:
    """A tool whose schema the Core cannot check refuses every call, saying why."""
    broken = {"type": "object", "properties": {"to": {"type": "text"}}}
    model = scripted(say("", ToolCall("t", {"to": "a"})), say("ok"))
    tools = [Tool("t", "", broken, lambda args: pytest.fail("the handler ran"))]
    result = run_agent(new_agent_options(model, tools=tools), session("s"), "x")
    assert "'type' must name JSON types" in tool_messages(result)[0]["error"]["message"]


def test_each_schema_is_compiled_when_the_tool_is_made_not_per_call(
    scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No schema is compiled while a run checks its calls' arguments."""
    tool = Tool("send", "", {**SEND, "title": "compiled here"}, lambda args: "sent")
    compiled: list[Any] = []
    original = Compiler.compile
    monkeypatch.setattr(
        Compiler, "compile", lambda self, schema: compiled.append(schema) or original(self, schema)
    )
    model = scripted(*[say("", ToolCall("send", {"to": str(i)})) for i in range(3)], say("ok"))
    result = run_agent(new_agent_options(model, tools=[tool]), session("s"), "x")
    assert result.tool_calls == 3 and compiled == []


def test_async_runs_check_arguments_too() -> None:
    """Under arun_agent an async handler is not awaited for a refused call."""
    seen: list[dict[str, Any]] = []

    async def send(arguments: dict[str, Any]) -> str:
        seen.append(arguments)
        return "sent"

    replies = [say("", ToolCall("send", {"to": 5})), say("ok")]

    async def model(request: Any) -> Any:
        return replies[request.step - 1]

    options = new_agent_options(model, tools=[Tool("send", "", SEND, send)])
    result = asyncio.run(arun_agent(options, session("s"), "x"))
    assert seen == []
    assert tool_messages(result)[0]["error"]["code"] == "TOOL_CALL_INVALID_ARGUMENTS"


def test_arguments_a_person_edited_are_checked(scripted: Any) -> None:
    """An approval that edits the arguments into invalid ones gets the call refused."""
    seen: list[dict[str, Any]] = []
    model = scripted(say("", ToolCall("send", {"to": "ada"}, id="c1")), say("ok"))
    options = new_agent_options(
        model, tools=[recording_tool(seen)], approval=require_approval(["send"])
    )
    stopped = run_agent(options, session("s"), "x")
    assert stopped.status == "interrupted"
    done = resume_agent(options, stopped.session, {"approved": True, "arguments": {"to": 1}})
    assert seen == []
    assert tool_messages(done)[0]["error"]["code"] == "TOOL_CALL_INVALID_ARGUMENTS"


class PowerCut(BaseException):
    """Stands for the process dying after the refused call."""


def test_a_journaled_run_with_a_refused_call_resumes_exactly() -> None:
    """A refused call leaves no journal entry, so a resumed run replays in step."""
    seen: list[dict[str, Any]] = []
    cut = [True]
    steps: list[int] = []

    def model(request: Any) -> Any:
        steps.append(request.step)
        if request.step == 1:
            return say("", ToolCall("send", {"to": 5}), ToolCall("send", {"to": "bo"}))
        if cut[0]:
            cut[0] = False
            raise PowerCut
        return say("done")

    options = new_agent_options(model, tools=[recording_tool(seen)])
    journal = ListJournal()
    with pytest.raises(PowerCut):
        run_agent(options, session("s"), "x", run_id="r1", journal=journal)
    result = run_agent(options, session("s"), "x", run_id="r1", journal=journal)
    assert result.output == "done" and steps == [1, 2, 2] and seen == [{"to": "bo"}]
