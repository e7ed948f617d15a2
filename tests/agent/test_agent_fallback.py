"""fallback_model: order of attempts, nesting, and what is not a fallback."""

from __future__ import annotations

from typing import Any

import pytest

from praxo_actors.agent import (
    AgentError,
    FallbackModel,
    fallback_model,
    new_agent_options,
    run_agent,
)
from praxo_actors.middleware import call_limit
from praxo_actors.models import ModelError, Request, message_assistant, response, session


def tracer(log: list[str], name: str, result: Any) -> Any:
    def model(request: Request) -> Any:
        log.append(name)
        return result

    return model


def test_primary_answer_skips_fallback() -> None:
    """When the primary answers, the fallback is not called."""
    log: list[str] = []
    model = fallback_model(
        tracer(log, "a", response(message_assistant("A"))), tracer(log, "b", None)
    )
    assert run_agent(new_agent_options(model), session("s"), "x").output == "A"
    assert log == ["a"]


def test_model_error_falls_back() -> None:
    """A primary ModelError makes the fallback answer."""
    log: list[str] = []
    model = fallback_model(
        tracer(log, "a", ModelError("DOWN")), tracer(log, "b", response(message_assistant("B")))
    )
    result = run_agent(new_agent_options(model), session("s"), "x")
    assert result.output == "B" and log == ["a", "b"]


def test_nested_fallbacks_try_every_child_in_order() -> None:
    """Nested fallbacks on either side try their children depth first, left to right."""
    log: list[str] = []
    down = ModelError("DOWN")
    model = fallback_model(
        fallback_model(tracer(log, "a", down), tracer(log, "b", down)),
        fallback_model(tracer(log, "c", down), tracer(log, "d", response(message_assistant("D")))),
    )
    result = run_agent(new_agent_options(model), session("s"), "x")
    assert result.output == "D" and log == ["a", "b", "c", "d"]


def test_all_children_failing_fail_with_last_code() -> None:
    """When every child returns a ModelError, the run fails with the last one's code."""
    model = fallback_model(lambda r: ModelError("FIRST"), lambda r: ModelError("LAST"))
    with pytest.raises(AgentError) as info:
        run_agent(new_agent_options(model), session("s"), "x")
    assert info.value.code == "LAST"


def test_exception_is_not_a_fallback() -> None:
    """An exception from the primary propagates; the fallback is not tried."""
    log: list[str] = []

    def primary(request: Request) -> Any:
        raise ConnectionError("net")

    model = fallback_model(primary, tracer(log, "b", response(message_assistant("B"))))
    with pytest.raises(ConnectionError):
        run_agent(new_agent_options(model), session("s"), "x")
    assert log == []


def test_malformed_return_is_not_a_fallback() -> None:
    """A primary returning garbage raises TypeError; the fallback is not tried."""
    log: list[str] = []
    model = fallback_model(lambda r: "oops", tracer(log, "b", response(message_assistant("B"))))
    with pytest.raises(TypeError):
        run_agent(new_agent_options(model), session("s"), "x")
    assert log == []


def test_fallback_attempts_count_as_one_model_call() -> None:
    """Primary and fallback attempts together count as one call against the model limit."""
    model = fallback_model(
        lambda r: ModelError("DOWN"), lambda r: response(message_assistant("ok"))
    )
    options = new_agent_options(model, call_limit=call_limit(1, 0))
    result = run_agent(options, session("s"), "x")
    assert result.model_calls == 1


def test_direct_call_and_children_are_kept() -> None:
    """A fallback model is itself a model callable directly, keeping its children unchanged."""
    a = lambda r: ModelError("A")  # noqa: E731
    b = lambda r: response(message_assistant("B"))  # noqa: E731
    model = fallback_model(a, b)
    assert isinstance(model, FallbackModel)
    assert model.primary is a and model.fallback is b
    request = Request(messages=[], tools=[], run_id="r", session_id="s", step=1)
    assert model(request) == response(message_assistant("B"))
    assert fallback_model(a, a)(request) == ModelError("A")


def test_children_must_be_callable() -> None:
    """A non-callable child raises TypeError."""
    with pytest.raises(TypeError):
        fallback_model(lambda r: None, "backup")  # type: ignore[arg-type]
