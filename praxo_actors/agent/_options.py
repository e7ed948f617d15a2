"""Agent options: the model, the tools and the opt-in middleware of a run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from praxo_actors._errors import AgentError, ToolCallError
from praxo_actors.agent._fallback import FallbackModel, Model
from praxo_actors.agent._tool import Tool
from praxo_actors.codes import AGENT_INVALID_OPTION, TOOL_CALL_UNKNOWN_FORMAT
from praxo_actors.core import tool_call_formats
from praxo_actors.middleware import (
    Approval,
    CallLimit,
    Compaction,
    StructuredOutput,
    ToolSelection,
)
from praxo_actors.models import Event, Session, ToolSpec

__all__ = ["UNKNOWN_TOOL", "AgentOptions", "Instructions", "Sink", "new_agent_options"]

UNKNOWN_TOOL = ("fail", "retry")
"""What ``unknown_tool`` takes: end the run, or tell the model the tools that exist."""

Sink = Callable[[Event], Any]
"""Receives every event of a run, in order (may be ``async def`` under ``arun_agent``)."""

Instructions = str | Callable[[Session], str]
"""The system prompt of every model request: a text, or a function of the run's session."""


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
    tool_call_format: str | None = None
    approval: Approval | None = None
    name: str | None = None
    tracer_provider: Any = field(default=None, repr=False)
    meter_provider: Any = field(default=None, repr=False)
    capture_content: bool = False
    max_attribute_bytes: int | None = 16 * 1024
    provider_name: str | None = None
    validate_tool_arguments: bool = True
    max_tool_retries: int = 3
    instructions: Instructions | None = field(default=None, repr=False)
    unknown_tool: str = "fail"
    # Derived once here so that a step costs no lookups or list building.
    _tools_by_name: dict[str, Tool] = field(init=False, repr=False, compare=False)
    _advertised: tuple[ToolSpec, ...] = field(init=False, repr=False, compare=False)
    _attempts: tuple[Model, ...] = field(init=False, repr=False, compare=False)
    _telemetry: bool = field(init=False, repr=False, compare=False)

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
            ("approval", Approval),
        ):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise TypeError(
                    f"{name} must be built with middleware.{name}(...), got {type(value).__name__}"
                )
        for name in ("pii", "parse_text_tool_calls", "capture_content", "validate_tool_arguments"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool")
        limit = self.max_attribute_bytes
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int):
                raise TypeError(f"max_attribute_bytes must be an int or None, got {limit!r}")
            if limit < 1:
                raise ValueError(f"max_attribute_bytes must be at least 1, got {limit}")
        retries = self.max_tool_retries
        if isinstance(retries, bool) or not isinstance(retries, int):
            raise TypeError(f"max_tool_retries must be an int, got {retries!r}")
        if retries < 0:
            raise ValueError(f"max_tool_retries must not be negative, got {retries}")
        instructions = self.instructions
        if not (instructions is None or isinstance(instructions, str) or callable(instructions)):
            raise TypeError("instructions must be a str, a callable Session -> str, or None")
        if self.unknown_tool not in UNKNOWN_TOOL:
            raise AgentError(
                AGENT_INVALID_OPTION,
                f"unknown_tool must be one of {', '.join(map(repr, UNKNOWN_TOOL))}, "
                f"got {self.unknown_tool!r}",
            )
        fmt = self.tool_call_format
        if fmt is not None and fmt != "auto" and fmt not in tool_call_formats():
            raise ToolCallError(TOOL_CALL_UNKNOWN_FORMAT, f"unknown tool_call_format {fmt!r}")
        for name in ("name", "provider_name"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise TypeError(f"{name} must be a non-empty str or None")
        for name, method in (("tracer_provider", "get_tracer"), ("meter_provider", "get_meter")):
            provider = getattr(self, name)
            if provider is not None and not callable(getattr(provider, method, None)):
                raise TypeError(f"{name} must be an OpenTelemetry {name[:-9]} provider or None")
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
        telemetry = self.tracer_provider is not None or self.meter_provider is not None
        object.__setattr__(self, "_telemetry", telemetry)


def new_agent_options(
    model: Model,
    *,
    tools: Sequence[Tool] = (),
    max_steps: int = 10,
    sink: Sink | None = None,
    tool_selection: ToolSelection | None = None,
    pii: bool = False,
    structured_output: StructuredOutput | None = None,
    call_limit: CallLimit | None = None,
    compaction: Compaction | None = None,
    parse_text_tool_calls: bool = True,
    tool_call_format: str | None = None,
    approval: Approval | None = None,
    name: str | None = None,
    tracer_provider: Any = None,
    meter_provider: Any = None,
    capture_content: bool = False,
    max_attribute_bytes: int | None = 16 * 1024,
    provider_name: str | None = None,
    validate_tool_arguments: bool = True,
    max_tool_retries: int = 3,
    instructions: Instructions | None = None,
    unknown_tool: str = "fail",
) -> AgentOptions:
    """Return options for :func:`~praxo_actors.agent.run_agent` with the given fields set.

    Every field is a typed keyword, so a misspelled one is a ``TypeError`` here and a mypy
    error before that.

    Args:
        model: A callable ``Request -> Response | ModelError`` (or ``async def``); see also
            :func:`~praxo_actors.agent.fallback_model`.
        tools: The tools the model may call.
        max_steps: Model calls at most (``AGENT_MAX_STEPS`` beyond).
        sink: Receives every event of a run (not with the runtime: subscribe there).
        tool_selection: Which tools a run may call (``AGENT_TOOL_NOT_SELECTED``).
        pii: Redact PII in what the model sees.
        structured_output: A JSON Schema the final answer must meet, with repairs.
        call_limit: Model and tool call budgets per run.
        compaction: Summarise the middle of long histories.
        parse_text_tool_calls: Read tool calls written as text when the model sends none.
        tool_call_format: The format of those calls (a name from
            :func:`~praxo_actors.core.tool_call_formats`, or ``"auto"``); None reads the
            default set.
        approval: Tools whose calls wait for a person's decision (``require_approval``).
        name: The agent's name in telemetry (``invoke_agent {name}``); the runtime names
            its agents' runs after their registered names when this is None.
        tracer_provider: An OpenTelemetry ``TracerProvider`` for the run's spans (None: the
            runtime's, else the global one; none set anywhere: no spans).
        meter_provider: An OpenTelemetry ``MeterProvider`` for its metrics (None likewise).
        capture_content: Record message content, tool arguments and tool results in spans,
            PII-redacted, dict keys too (off by default: telemetry carries no content).
        max_attribute_bytes: The most UTF-8 bytes of any string telemetry records (an
            attribute, a status, an event); longer ones are cut at a character. None: no cut.
        provider_name: ``gen_ai.provider.name`` of the run and of the calls of a model that
            names none itself (``openai_model`` and ``anthropic_model`` do), e.g.
            ``"openai"`` for a callback that calls OpenAI.
        validate_tool_arguments: Check each call's arguments against its tool's schema before
            the handler runs; a call that fails gets ``TOOL_CALL_INVALID_ARGUMENTS`` as its
            result, and its handler is not called. False hands any arguments over unchecked.
        max_tool_retries: How many ``ToolRetry`` (or ``TOOL_RETRY`` errors) a run takes from
            its tools; one more fails it with ``AGENT_TOOL_RETRIES``.
        instructions: Sent as a system message ahead of the history in every model request,
            never stored in the session: a str, or ``instructions(session) -> str`` called
            once per run with the session it starts from (``""`` sends none).
        unknown_tool: What a call of a tool that does not exist does: ``"fail"`` ends the
            run with ``TOOL_NOT_FOUND``; ``"retry"`` makes the call's result
            ``ToolError("TOOL_NOT_FOUND", …)`` naming the tools that exist, for the model to
            correct itself, counted against ``max_tool_retries``.

    Raises:
        TypeError: An unknown field, or a field of the wrong type.
        ValueError: ``max_steps`` or ``max_attribute_bytes`` below 1, ``max_tool_retries``
            below 0, or two tools with the same name.
        ToolCallError: ``TOOL_CALL_UNKNOWN_FORMAT`` for an unknown ``tool_call_format``.
        AgentError: ``AGENT_INVALID_OPTION`` for an ``unknown_tool`` other than ``"fail"``
            or ``"retry"``.
    """
    return AgentOptions(
        model,
        tools=tools,
        max_steps=max_steps,
        sink=sink,
        tool_selection=tool_selection,
        pii=pii,
        structured_output=structured_output,
        call_limit=call_limit,
        compaction=compaction,
        parse_text_tool_calls=parse_text_tool_calls,
        tool_call_format=tool_call_format,
        approval=approval,
        name=name,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
        max_attribute_bytes=max_attribute_bytes,
        provider_name=provider_name,
        validate_tool_arguments=validate_tool_arguments,
        max_tool_retries=max_tool_retries,
        instructions=instructions,
        unknown_tool=unknown_tool,
    )
