"""Tools an agent may call, and the value a tool returns to report expected failure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

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
    """

    name: str
    description: str
    parameters: dict[str, Any]
    handler: Callable[[dict[str, Any]], Any] = field(repr=False)
