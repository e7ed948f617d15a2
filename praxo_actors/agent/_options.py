"""Agent options: the model, the tools and the opt-in middleware of a run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from praxo_actors.agent._fallback import FallbackModel, Model
from praxo_actors.agent._tool import Tool
from praxo_actors.middleware import CallLimit, Compaction, StructuredOutput, ToolSelection
from praxo_actors.models import Event, ToolSpec

__all__ = ["AgentOptions", "Sink", "new_agent_options"]

Sink = Callable[[Event], Any]
"""Receives every event of a run, in order (may be ``async def`` under ``arun_agent``)."""


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """Everything a run needs besides the session and the input; reusable across runs.

    Build it with :func:`new_agent_options`; change it with :func:`dataclasses.replace`. It
    holds no per-run state (call counters live in the run), so one instance serves any number
    of runs, concurrently too.
    """

    model: Model = field(repr=False)
    tools: Sequence[Tool] = ()
    max_steps: int = 10
    sink: Sink | None = field(default=None, repr=False)
    tool_selection: ToolSelection | None = None
    pii: bool = False
    structured_output: StructuredOutput | None = None
    call_limit: CallLimit | None = None
    compaction: Compaction | None = None
    parse_text_tool_calls: bool = True
    # Derived once here so that a step costs no lookups or list building.
    _tools_by_name: dict[str, Tool] = field(init=False, repr=False, compare=False)
    _advertised: tuple[ToolSpec, ...] = field(init=False, repr=False, compare=False)
    _attempts: tuple[Model, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not callable(self.model):
            raise TypeError("model must be callable: Request -> Response | ModelError")
        tools = tuple(self.tools)
        by_name: dict[str, Tool] = {}
        for tool in tools:
            if not isinstance(tool, Tool):
                raise TypeError(f"tools must be Tool instances, got {type(tool).__name__}")
            if tool.name in by_name:
                raise ValueError(f"two tools are named {tool.name!r}")
            by_name[tool.name] = tool
        if isinstance(self.max_steps, bool) or not isinstance(self.max_steps, int):
            raise TypeError(f"max_steps must be an int, got {self.max_steps!r}")
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {self.max_steps}")
        if self.sink is not None and not callable(self.sink):
            raise TypeError("sink must be callable or None")
        for name, kind in (
            ("tool_selection", ToolSelection),
            ("structured_output", StructuredOutput),
            ("call_limit", CallLimit),
            ("compaction", Compaction),
        ):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise TypeError(
                    f"{name} must be built with middleware.{name}(...), got {type(value).__name__}"
                )
        for name in ("pii", "parse_text_tool_calls"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool")
        selection = self.tool_selection
        advertised = tuple(
            ToolSpec(t.name, t.description, t.parameters)
            for t in tools
            if selection is None or selection.permits(t.name)
        )
        attempts = self.model.attempts if isinstance(self.model, FallbackModel) else (self.model,)
        object.__setattr__(self, "tools", tools)
        object.__setattr__(self, "_tools_by_name", by_name)
        object.__setattr__(self, "_advertised", advertised)
        object.__setattr__(self, "_attempts", attempts)


def new_agent_options(model: Model, **fields: Any) -> AgentOptions:
    """Return options for :func:`~praxo_actors.agent.run_agent` with the given fields set.

    Args:
        model: A callable ``Request -> Response | ModelError``; see also
            :func:`~praxo_actors.agent.fallback_model`.
        **fields: ``tools``, ``max_steps`` (10), ``sink``, ``tool_selection``, ``pii`` (False),
            ``structured_output``, ``call_limit``, ``compaction``,
            ``parse_text_tool_calls`` (True).

    Raises:
        TypeError: An unknown field, or a field of the wrong type.
        ValueError: ``max_steps`` below 1, or two tools with the same name.
    """
    unknown = sorted(set(fields) - _FIELDS)
    if unknown:
        raise TypeError(f"unknown agent option(s): {', '.join(unknown)}")
    return AgentOptions(model, **fields)


_FIELDS = frozenset(
    {
        "tools",
        "max_steps",
        "sink",
        "tool_selection",
        "pii",
        "structured_output",
        "call_limit",
        "compaction",
        "parse_text_tool_calls",
    }
)
