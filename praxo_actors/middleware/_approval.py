"""Approvals: a person says yes or no before the listed tools run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Approval", "require_approval"]


@dataclass(frozen=True, slots=True)
class Approval:
    """The tools whose calls wait for a person's decision (see :func:`require_approval`)."""

    names: frozenset[str]
    destructive: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.names, frozenset) or not all(
            isinstance(n, str) and n for n in self.names
        ):
            raise TypeError("approval names must be non-empty strings")
        if not isinstance(self.destructive, bool):
            raise TypeError("destructive must be a bool")

    def requires(self, name: str, tool: Any = None) -> bool:
        """Say whether a call of tool ``name`` (the ``Tool``, when known) waits for approval."""
        if name in self.names:
            return True
        return self.destructive and says_destructive(getattr(tool, "annotations", None))


def says_destructive(annotations: Any) -> bool:
    """Say whether MCP tool ``annotations`` mark the tool destructive.

    ``destructiveHint`` must be true and ``readOnlyHint`` not (MCP: a read-only tool changes
    nothing). A tool with no annotations is not taken to be destructive.
    """
    if not isinstance(annotations, dict):
        return False
    return (
        annotations.get("destructiveHint") is True and annotations.get("readOnlyHint") is not True
    )


def require_approval(names: Iterable[str] = (), *, destructive: bool = False) -> Approval:
    """Return settings that stop a run before any call of the named tools, for approval.

    With ``destructive=True`` every tool whose annotations say it is destructive
    (``Tool.annotations["destructiveHint"]`` true and not ``readOnlyHint``, as an MCP server
    marks its tools) waits for approval too, besides the named ones.

    The run interrupts (``RunResult.status == "interrupted"``) with the payload
    ``{"approval": {"tool": name, "arguments": {...}, "call_id": id}}``. Resume it with
    ``True`` (the tool runs), ``False`` (its result is the error ``APPROVAL_DENIED``; no tool
    budget is spent) or ``{"approved": True, "arguments": {...}}`` (it runs with the edited
    arguments). Selection and existence are checked before asking; the tool budget after.

    Raises:
        TypeError: ``names`` is a str, or holds something that is not a non-empty str;
            ``destructive`` is not a bool.
    """
    if isinstance(names, str):
        raise TypeError("require_approval takes a collection of tool names, not a str")
    return Approval(frozenset(names), destructive)
