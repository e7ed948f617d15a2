"""call: invoking a tool directly, outside the loop's selection and limits."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from praxo_actors.agent import AgentError, Tool, ToolError, call, new_agent_options
from praxo_actors.middleware import call_limit, tool_selection
from praxo_actors.models import ToolCall


def model(request: Any) -> Any:
    raise AssertionError("call never calls the model")


def test_returns_handler_value_unchanged() -> None:
    """The handler's return value comes back as the same object."""
    value = {"not": "encoded", "set": {1}}
    options = new_agent_options(model, tools=[Tool("t", "", {}, lambda a: value)])
    assert call(options, ToolCall("t", {})) is value


def test_returns_tool_error_unchanged() -> None:
    """A ToolError return is returned, not raised."""
    error = ToolError("E", "m")
    options = new_agent_options(model, tools=[Tool("t", "", {}, lambda a: error)])
    assert call(options, ToolCall("t", {})) is error


def test_unknown_tool_raises_tool_not_found() -> None:
    """An unregistered name raises AgentError TOOL_NOT_FOUND."""
    with pytest.raises(AgentError) as info:
        call(new_agent_options(model), ToolCall("nope", {}))
    assert info.value.code == "TOOL_NOT_FOUND" and info.value.run_id is None


def test_selection_and_limits_do_not_apply() -> None:
    """A direct call ignores tool selection and call limits."""
    options = new_agent_options(
        model,
        tools=[Tool("t", "", {}, lambda a: a["n"])],
        tool_selection=tool_selection([]),
        call_limit=call_limit(1, 1),
    )
    assert [call(options, ToolCall("t", {"n": i})) for i in range(3)] == [0, 1, 2]


def test_handler_gets_a_copy_of_arguments() -> None:
    """A handler that mutates its arguments leaves the ToolCall unchanged."""
    options = new_agent_options(model, tools=[Tool("t", "", {}, lambda a: a.update(x=2))])
    tool_call = ToolCall("t", {"x": 1})
    call(options, tool_call)
    assert tool_call.arguments == {"x": 1}


def test_exception_propagates() -> None:
    """An exception raised by the handler propagates."""

    def handler(arguments: dict[str, Any]) -> Any:
        raise ValueError("bad")

    with pytest.raises(ValueError):
        call(new_agent_options(model, tools=[Tool("t", "", {}, handler)]), ToolCall("t", {}))


def test_async_handler_returns_awaitable() -> None:
    """An async handler's coroutine is returned for the caller to await."""

    async def handler(arguments: dict[str, Any]) -> int:
        return 5

    coroutine = call(
        new_agent_options(model, tools=[Tool("t", "", {}, handler)]), ToolCall("t", {})
    )
    assert asyncio.run(coroutine) == 5
