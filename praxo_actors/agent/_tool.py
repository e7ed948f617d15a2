"""Tools an agent may call, and how a tool reports expected failure: a returned :class:`ToolError`
or a raised :class:`ToolRetry`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import msgspec

from praxo_actors.core._schema import Validator, compile_validator

__all__ = ["TOOL_RETRY", "Tool", "ToolError", "ToolRetry"]

TOOL_RETRY: Final = "TOOL_RETRY"


class ToolError(msgspec.Struct, frozen=True):
    """Returned (not raised) by a tool handler to report an expected failure to the model.

    ``ToolError("TOOL_RETRY", message)`` is what a raised :class:`ToolRetry` becomes, and
    counts against the run's ``max_tool_retries`` the same way.
    """

    code: str
    message: str = ""


class ToolRetry(Exception):
    """Raised by a tool handler to tell the model its call was wrong, and how to do better.

    The run goes on: ``message`` goes back to the model as the call's result,
    ``ToolError("TOOL_RETRY", message)``, so the model can call again. A run takes at most
    ``max_tool_retries`` of them (``new_agent_options``, default 3); one more fails it with
    ``AGENT_TOOL_RETRIES``. Raised anywhere but in a tool handler the loop runs, it is an
    exception like any other.
    """

    def __init__(self, message: str) -> None:
        if not isinstance(message, str):
            raise TypeError(f"a ToolRetry message must be str, not {type(message).__name__}")
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Tool:
    """A named tool: its JSON Schema ``parameters`` and the ``handler`` that runs it.

    ``handler`` receives the call's arguments (a dict) and returns any JSON value, or a
    :class:`ToolError`; it may raise :class:`ToolRetry`. Under
    :func:`~praxo_actors.agent.arun_agent` it may be ``async def``. Before it runs, the loop
    checks the arguments against ``parameters`` (compiled once, here: a schema changed after
    the tool is made is not seen by the check).

    ``delivery`` matters to durable runs only: a call in flight when its run was cut off is made
    again on resume (``"at_least_once"``, the default) or not (``"at_most_once"``: its result
    is then the error ``TOOL_INTERRUPTED``, and the model decides what to do).

    ``text_results``: a ``str`` the handler returns goes to the model as that text. Otherwise
    (the default) every result is encoded as JSON, a ``str`` too (``ok`` becomes ``"ok"``).
    :func:`~praxo_actors.agent.tool` sets it.

    ``annotations``: what the tool's maker says of it, as MCP's tool annotations
    (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``, ``title``);
    :class:`~praxo_actors.mcp.MCPTools` copies a server's, and
    ``require_approval(destructive=True)`` reads ``destructiveHint``. ``output_schema``: the
    JSON Schema of its structured results, when it declares one (an MCP tool's
    ``outputSchema``). Neither changes how the tool is called.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    handler: Callable[[dict[str, Any]], Any] = field(repr=False)
    delivery: Literal["at_least_once", "at_most_once"] = "at_least_once"
    text_results: bool = False
    annotations: dict[str, Any] | None = field(default=None, compare=False)
    output_schema: dict[str, Any] | None = field(default=None, compare=False)
    # None for a schema that admits every object ({} or true): nothing to check.
    _validator: Validator | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.delivery not in ("at_least_once", "at_most_once"):
            raise ValueError(
                f"delivery must be 'at_least_once' or 'at_most_once', got {self.delivery!r}"
            )
        if not isinstance(self.text_results, bool):
            raise TypeError("text_results must be a bool")
        for name in ("annotations", "output_schema"):
            if not isinstance(getattr(self, name), dict | None):
                raise TypeError(f"{name} must be a dict or None")
        schema: Any = self.parameters
        checks = not (schema is True or (isinstance(schema, dict) and not schema))
        object.__setattr__(self, "_validator", compile_validator(schema) if checks else None)

    def __getstate__(self) -> dict[str, Any]:
        # The compiled check is closures: rebuilt from the schema, never pickled.
        return {k: v for k, v in self.__dict__.items() if k != "_validator"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__post_init__()
