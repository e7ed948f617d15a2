"""tool_selection: what is advertised, what is rejected, and in which order checks apply."""

from __future__ import annotations

from typing import Any

import pytest
from _helpers import say

from praxo_actors.agent import AgentError, Tool, new_agent_options, run_agent
from praxo_actors.middleware import ToolSelection, call_limit, tool_selection
from praxo_actors.models import ToolCall, session


def tools(log: list[str]) -> list[Tool]:
    def make(name: str) -> Tool:
        return Tool(name, "", {}, lambda a: log.append(name) or "ok")

    return [make("a"), make("b"), make("c")]


def test_none_advertises_and_permits_all(scripted: Any) -> None:
    """Without a selection every registered tool is advertised and callable."""
    log: list[str] = []
    model = scripted(say("", ToolCall("c", {})), say("ok"))
    run_agent(new_agent_options(model, tools=tools(log)), session("s"), "x")
    assert [t.name for t in model.requests[0].tools] == ["a", "b", "c"]
    assert log == ["c"]


def test_selection_filters_advertised_tools_in_registration_order(scripted: Any) -> None:
    """Only selected tools are advertised, in registration order, not selection order."""
    model = scripted(say("ok"))
    options = new_agent_options(model, tools=tools([]), tool_selection=tool_selection(["c", "a"]))
    run_agent(options, session("s"), "x")
    assert [t.name for t in model.requests[0].tools] == ["a", "c"]


def test_unselected_call_fails_before_invocation(scripted: Any, events: Any) -> None:
    """A call to a registered but unselected tool fails the run and the handler never runs."""
    log: list[str] = []
    model = scripted(say("", ToolCall("b", {})))
    options = new_agent_options(
        model, tools=tools(log), tool_selection=tool_selection(["a"]), sink=events
    )
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_TOOL_NOT_SELECTED"
    assert log == []
    assert "tool.started" not in events.types()
    assert events[-1].data["code"] == "AGENT_TOOL_NOT_SELECTED"


def test_empty_selection_advertises_none_and_rejects_every_call(scripted: Any) -> None:
    """An empty selection advertises no tools and rejects any call."""
    model = scripted(say("", ToolCall("a", {})))
    options = new_agent_options(model, tools=tools([]), tool_selection=tool_selection([]))
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_TOOL_NOT_SELECTED"
    assert model.requests[0].tools == []


def test_empty_selection_rejects_unregistered_name_as_not_selected(scripted: Any) -> None:
    """Selection is checked before existence: an unknown, unselected name is not selected."""
    model = scripted(say("", ToolCall("ghost", {})))
    options = new_agent_options(model, tools=tools([]), tool_selection=tool_selection([]))
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_TOOL_NOT_SELECTED"


def test_selected_but_unregistered_name_fails_not_found(scripted: Any) -> None:
    """A selected name with no registered tool fails with TOOL_NOT_FOUND."""
    model = scripted(say("", ToolCall("ghost", {})))
    options = new_agent_options(model, tools=tools([]), tool_selection=tool_selection(["ghost"]))
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "TOOL_NOT_FOUND"
    assert model.requests[0].tools == []


def test_rejected_call_consumes_no_tool_budget(scripted: Any) -> None:
    """With the tool budget spent, an unselected call still fails as not selected."""
    log: list[str] = []
    model = scripted(say("", ToolCall("a", {}), ToolCall("b", {})))
    options = new_agent_options(
        model,
        tools=tools(log),
        tool_selection=tool_selection(["a"]),
        call_limit=call_limit(0, 1),
    )
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_TOOL_NOT_SELECTED"
    assert log == ["a"]


def test_earlier_calls_in_the_message_have_run(scripted: Any) -> None:
    """Calls are checked one by one: those before the rejected call have run."""
    log: list[str] = []
    model = scripted(say("", ToolCall("a", {}), ToolCall("b", {}), ToolCall("a", {})))
    options = new_agent_options(model, tools=tools(log), tool_selection=tool_selection(["a"]))
    with pytest.raises(AgentError):
        run_agent(options, session("s"), "x")
    assert log == ["a"]


def test_text_parsed_calls_are_checked_too(scripted: Any) -> None:
    """A tool call parsed from text is subject to the selection."""
    model = scripted(say('<tool_call name="b">{}</tool_call>'))
    options = new_agent_options(model, tools=tools([]), tool_selection=tool_selection(["a"]))
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_TOOL_NOT_SELECTED"


def test_constructor_validates_names() -> None:
    """A bare string or non-str names are refused; names keep their order."""
    with pytest.raises(TypeError):
        tool_selection("echo")
    with pytest.raises(TypeError):
        tool_selection([1])  # type: ignore[list-item]
    selection = tool_selection(iter(["b", "a"]))
    assert selection == ToolSelection(("b", "a"))
    assert selection.permits("a") and not selection.permits("c")
