"""Tool selection: advertise and permit only some of the registered tools."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["ToolSelection", "tool_selection"]


@dataclass(frozen=True, slots=True)
class ToolSelection:
    """The names of the tools a run advertises and permits (advertised in registration order).

    An empty selection advertises no tool and rejects every call with
    ``AGENT_TOOL_NOT_SELECTED``. A selected name that no tool is registered under is still
    rejected with ``TOOL_NOT_FOUND`` when called. This restricts the agent loop only; it is no
    sandbox for :func:`~praxo_actors.agent.call`.
    """

    names: tuple[str, ...]
    _set: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.names, str) or not all(isinstance(n, str) for n in self.names):
            raise TypeError("tool_selection names must be an iterable of str")
        object.__setattr__(self, "_set", frozenset(self.names))

    def permits(self, name: str) -> bool:
        """Return whether ``name`` is selected."""
        return name in self._set


def tool_selection(names: Iterable[str]) -> ToolSelection:
    """Return a selection that advertises and permits only ``names``.

    Args:
        names: Tool names; a bare ``str`` is refused, since it is almost always a missing list.

    Raises:
        TypeError: ``names`` is a ``str`` or holds a non-str.
    """
    if isinstance(names, str):
        raise TypeError("tool_selection names must be an iterable of str, not a str")
    return ToolSelection(tuple(names))
