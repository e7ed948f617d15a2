"""``unknown_tool``: a call of a tool that does not exist ends the run, or goes to the model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _helpers import Events, say

from praxo_actors import PraxoError
from praxo_actors.agent import AgentError, Tool, new_agent_options, run_agent
from praxo_actors.models import Message, ToolCall, session


def tools() -> list[Tool]:
    return [
        Tool("add", "Add.", {"type": "object"}, lambda a: a["a"] + a["b"]),
        Tool("lookup", "Look up.", {"type": "object"}, lambda a: "Paris"),
    ]


def error_of(message: Message) -> dict[str, Any]:
    assert isinstance(message.content, str)
    error: dict[str, Any] = json.loads(message.content)["error"]
    return error


def test_fail_is_the_default(scripted: Any) -> None:
    """Without the option an unknown name ends the run with TOOL_NOT_FOUND, as before."""
    model = scripted(say("", ToolCall("sum", {}, "c1")), say("never"))
    with pytest.raises(AgentError) as info:
        run_agent(new_agent_options(model, tools=tools()), session("s"), "x")
    assert info.value.code == "TOOL_NOT_FOUND"


def test_retry_tells_the_model_the_tools_that_exist(scripted: Any) -> None:
    """With "retry" the call's result is TOOL_NOT_FOUND naming the tools; the run goes on."""
    events = Events()
    model = scripted(
        say("", ToolCall("sum", {"a": 1, "b": 2}, "c1")),
        say("", ToolCall("add", {"a": 1, "b": 2}, "c2")),
        say("3"),
    )
    options = new_agent_options(model, tools=tools(), unknown_tool="retry", sink=events)
    result = run_agent(options, session("s"), "x")
    assert result.output == "3" and result.tool_calls == 1
    answer = result.session.messages[2]
    assert (answer.role, answer.tool_call_id, answer.name) == ("tool", "c1", "sum")
    error = error_of(answer)
    assert error["code"] == "TOOL_NOT_FOUND"
    assert "'sum'" in error["message"] and "add, lookup" in error["message"]
    assert model.requests[1].messages[-1] == answer
    completed = [e.data for e in events if e.type == "tool.completed"]
    assert [(d["id"], d["error"]) for d in completed] == [("c1", "TOOL_NOT_FOUND"), ("c2", None)]


def test_retries_are_bounded_by_max_tool_retries(scripted: Any) -> None:
    """Unknown names count against max_tool_retries; one more fails the run."""
    model = scripted(*[say("", ToolCall("sum", {}, f"c{n}")) for n in range(3)])
    options = new_agent_options(model, tools=tools(), unknown_tool="retry", max_tool_retries=2)
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_TOOL_RETRIES"
    assert "'sum'" in info.value.message
    assert len(model.requests) == 3


def test_a_tool_not_selected_still_fails(scripted: Any) -> None:
    """Retry is for names that do not exist: a tool left out by tool_selection still fails."""
    from praxo_actors.middleware import tool_selection

    model = scripted(say("", ToolCall("add", {}, "c1")))
    options = new_agent_options(
        model, tools=tools(), unknown_tool="retry", tool_selection=tool_selection(["lookup"])
    )
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_TOOL_NOT_SELECTED"


@pytest.mark.parametrize("value", ["ignore", "", None, 1])
def test_a_bad_value_is_refused_with_a_code(scripted: Any, value: Any) -> None:
    """Anything but "fail" or "retry" is refused when the options are made."""
    with pytest.raises(PraxoError) as info:
        new_agent_options(scripted(say("x")), unknown_tool=value)
    assert info.value.code == "AGENT_INVALID_OPTION"
