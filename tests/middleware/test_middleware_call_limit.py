"""call_limit: independent per-run model and tool budgets, checked before each call."""

from __future__ import annotations

from typing import Any

import pytest
from _helpers import say

from praxo_actors.agent import AgentError, Tool, call, new_agent_options, run_agent
from praxo_actors.middleware import CallLimit, call_limit
from praxo_actors.models import Response, ToolCall, session


def looping_model(request: Any) -> Response:
    return say("", ToolCall("t", {"step": request.step}))


def counting_tool(log: list[Any]) -> Tool:
    return Tool("t", "", {}, lambda a: log.append(a) or "ok")


def test_model_limit_fails_before_the_extra_call(events: Any) -> None:
    """With model_limit 2 the third model call is refused before it is made."""
    steps: list[int] = []

    def model(request: Any) -> Response:
        steps.append(request.step)
        return looping_model(request)

    options = new_agent_options(
        model, tools=[counting_tool([])], call_limit=call_limit(2, 0), sink=events
    )
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_MODEL_CALL_LIMIT"
    assert steps == [1, 2]
    assert events.types().count("model.requested") == 2


def test_tool_limit_fails_before_the_extra_call() -> None:
    """With tool_limit 2 the third tool call is refused before its handler runs."""
    log: list[Any] = []
    options = new_agent_options(
        looping_model, tools=[counting_tool(log)], call_limit=call_limit(0, 2)
    )
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_TOOL_CALL_LIMIT"
    assert len(log) == 2


@pytest.mark.parametrize("limit", [0, -1])
def test_nonpositive_limits_are_unlimited(limit: int) -> None:
    """Zero or negative limits leave the run bounded only by max_steps."""
    log: list[Any] = []
    options = new_agent_options(
        looping_model,
        tools=[counting_tool(log)],
        call_limit=call_limit(limit, limit),
        max_steps=5,
    )
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_MAX_STEPS"
    assert len(log) == 5


def test_limits_are_independent() -> None:
    """A tight tool limit does not restrict model calls that make no tool calls."""
    options = new_agent_options(lambda r: say("done"), call_limit=call_limit(0, 1))
    assert run_agent(options, session("s"), "x").model_calls == 1


def test_exact_budget_completes() -> None:
    """A run that uses exactly its budgets completes."""
    replies = [say("", ToolCall("t", {}), ToolCall("t", {})), say("done")]
    options = new_agent_options(
        lambda r: replies[r.step - 1], tools=[counting_tool([])], call_limit=call_limit(2, 2)
    )
    result = run_agent(options, session("s"), "x")
    assert (result.model_calls, result.tool_calls) == (2, 2)


def test_existence_is_checked_before_the_tool_budget() -> None:
    """With the tool budget spent, an unknown tool still fails as TOOL_NOT_FOUND."""
    log: list[Any] = []
    reply = say("", ToolCall("t", {}), ToolCall("ghost", {}))
    options = new_agent_options(
        lambda r: reply, tools=[counting_tool(log)], call_limit=call_limit(0, 1)
    )
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "TOOL_NOT_FOUND" and len(log) == 1


def test_counters_reset_every_run() -> None:
    """Reusing the options starts every run with fresh counters."""
    replies = iter([say("", ToolCall("t", {})), say("one"), say("", ToolCall("t", {})), say("two")])
    options = new_agent_options(
        lambda r: next(replies), tools=[counting_tool([])], call_limit=call_limit(2, 1)
    )
    first = run_agent(options, session("s"), "x")
    second = run_agent(options, first.session, "y")
    assert (first.output, second.output) == ("one", "two")
    assert (second.model_calls, second.tool_calls) == (2, 1)


def test_direct_calls_are_not_limited() -> None:
    """Direct call() ignores the tool budget."""
    log: list[Any] = []
    options = new_agent_options(
        looping_model, tools=[counting_tool(log)], call_limit=call_limit(1, 1)
    )
    for _ in range(3):
        call(options, ToolCall("t", {}))
    assert len(log) == 3


def test_limits_must_be_ints() -> None:
    """Non-int limits are refused."""
    with pytest.raises(TypeError):
        call_limit(1.5, 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        call_limit(1, True)
    assert call_limit(3, 4) == CallLimit(3, 4)
