"""Call limits: bound the model and tool calls of one run."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CallLimit", "call_limit"]


@dataclass(frozen=True, slots=True)
class CallLimit:
    """Per-run budgets for model and tool calls; a nonpositive limit means unlimited.

    Both are checked before the call is made: the run fails with ``AGENT_MODEL_CALL_LIMIT`` or
    ``AGENT_TOOL_CALL_LIMIT``. A :func:`~praxo_actors.agent.fallback_model`'s attempts together
    count as one model call; tool selection and existence are checked before the tool budget is
    consumed. The counters live in the run, so they start at zero on every run of the same
    options. Direct :func:`~praxo_actors.agent.call` and work a callback does on its own are not
    counted.
    """

    model_limit: int
    tool_limit: int

    def __post_init__(self) -> None:
        for name in ("model_limit", "tool_limit"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"call_limit {name} must be an int, got {value!r}")


def call_limit(model_limit: int, tool_limit: int) -> CallLimit:
    """Return per-run budgets for model and tool calls (nonpositive: unlimited).

    Raises:
        TypeError: A limit is not an ``int``.
    """
    return CallLimit(model_limit, tool_limit)
