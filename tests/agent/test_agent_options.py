"""new_agent_options: fields, defaults, validation and reuse."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from praxo_actors import ToolCallError
from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.middleware import call_limit, compaction, structured_output, tool_selection
from praxo_actors.models import message_assistant, response


def model(request: Any) -> Any:
    return response(message_assistant("ok"))


def test_defaults() -> None:
    """Options default to no tools, ten steps, no sink and every middleware off."""
    options = new_agent_options(model)
    assert isinstance(options, AgentOptions)
    assert options.model is model
    assert options.tools == ()
    assert options.max_steps == 10
    assert options.sink is None
    assert options.tool_selection is None
    assert options.pii is False
    assert options.structured_output is None
    assert options.call_limit is None
    assert options.compaction is None
    assert options.parse_text_tool_calls is True


def test_every_field_can_be_set() -> None:
    """Each documented field is accepted by new_agent_options."""
    tool = Tool("t", "", {}, lambda a: None)
    options = new_agent_options(
        model,
        tools=[tool],
        max_steps=3,
        sink=print,
        tool_selection=tool_selection(["t"]),
        pii=True,
        structured_output=structured_output({}, 0),
        call_limit=call_limit(1, 2),
        compaction=compaction(100),
        parse_text_tool_calls=False,
    )
    assert options.tools == (tool,) and options.max_steps == 3 and options.pii
    assert options.call_limit == call_limit(1, 2)


def test_unknown_field_raises_type_error() -> None:
    """An unknown option name raises TypeError."""
    with pytest.raises(TypeError, match="max_step"):
        new_agent_options(model, max_step=3)


def test_options_are_frozen_and_tools_are_copied() -> None:
    """Options cannot be mutated and keep their own tuple of tools."""
    tools = [Tool("t", "", {}, lambda a: None)]
    options = new_agent_options(model, tools=tools)
    tools.append(Tool("u", "", {}, lambda a: None))
    assert [t.name for t in options.tools] == ["t"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_steps = 5  # type: ignore[misc]


def test_replace_recomputes_derived_state() -> None:
    """dataclasses.replace gives new options whose selection governs the advertised tools."""
    tools = [Tool(n, "", {}, lambda a: None) for n in ("a", "b")]
    options = new_agent_options(model, tools=tools)
    narrowed = dataclasses.replace(options, tool_selection=tool_selection(["b"]))
    assert [t.name for t in narrowed._advertised] == ["b"]
    assert [t.name for t in options._advertised] == ["a", "b"]


def test_an_unknown_tool_call_format_is_refused() -> None:
    """An unknown tool_call_format is refused at construction with TOOL_CALL_UNKNOWN_FORMAT."""
    with pytest.raises(ToolCallError) as info:
        new_agent_options(model, tool_call_format="hermes3")
    assert info.value.code == "TOOL_CALL_UNKNOWN_FORMAT"
    assert new_agent_options(model, tool_call_format="auto").tool_call_format == "auto"
    assert (
        new_agent_options(model, tool_call_format="qwen3_coder").tool_call_format == "qwen3_coder"
    )


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"max_steps": 0}, ValueError),
        ({"max_steps": 1.5}, TypeError),
        ({"max_steps": True}, TypeError),
        ({"pii": "yes"}, TypeError),
        ({"parse_text_tool_calls": 1}, TypeError),
        ({"sink": "stdout"}, TypeError),
        ({"tools": ["echo"]}, TypeError),
        ({"tool_selection": ["echo"]}, TypeError),
        ({"call_limit": (1, 2)}, TypeError),
        ({"structured_output": {"type": "object"}}, TypeError),
        ({"compaction": 100}, TypeError),
    ],
)
def test_invalid_fields_are_refused(fields: dict[str, Any], error: type[Exception]) -> None:
    """A field of the wrong type or range is refused at construction."""
    with pytest.raises(error):
        new_agent_options(model, **fields)


def test_duplicate_tool_names_are_refused() -> None:
    """Two tools with one name raise ValueError."""
    tool = Tool("t", "", {}, lambda a: None)
    with pytest.raises(ValueError, match="'t'"):
        new_agent_options(model, tools=[tool, tool])


def test_model_must_be_callable() -> None:
    """A model that is not callable raises TypeError."""
    with pytest.raises(TypeError):
        new_agent_options("gpt")  # type: ignore[arg-type]
