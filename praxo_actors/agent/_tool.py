"""Tools an agent may call, and the value a tool returns to report expected failure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

__all__ = ["Tool", "ToolError"]


class ToolError(msgspec.Struct, frozen=True):
    """Returned (not raised) by a tool handler to report an expected failure to the model."""

    code: str
    message: str = ""


@dataclass(frozen=True)
class Tool:
    """A named tool: its JSON Schema ``parameters`` and the ``handler`` that runs it.

    ``handler`` receives the call's arguments (a dict) and returns any JSON value, or a
    :class:`ToolError`. Under :func:`~praxo_actors.agent.arun_agent` it may be ``async def``.

    ``delivery`` matters to durable runs only: a call in flight when its run was cut off is made
    again on resume (``"at_least_once"``, the default) or not (``"at_most_once"``: its result
    is then the error ``TOOL_INTERRUPTED``, and the model decides what to do).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    handler: Callable[[dict[str, Any]], Any] = field(repr=False)
    delivery: Literal["at_least_once", "at_most_once"] = "at_least_once"

    def __post_init__(self) -> None:
        if self.delivery not in ("at_least_once", "at_most_once"):
            raise ValueError(
                f"delivery must be 'at_least_once' or 'at_most_once', got {self.delivery!r}"
            )
