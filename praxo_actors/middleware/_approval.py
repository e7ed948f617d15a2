"""Approvals: a person says yes or no before the listed tools run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Approval", "require_approval"]


@dataclass(frozen=True, slots=True)
class Approval:
    """The tools whose calls wait for a person's decision (see :func:`require_approval`)."""

    names: frozenset[str]

    def __post_init__(self) -> None:
        if not isinstance(self.names, frozenset) or not all(
            isinstance(n, str) and n for n in self.names
        ):
            raise TypeError("approval names must be non-empty strings")

    def requires(self, name: str) -> bool:
        return name in self.names


def require_approval(names: Iterable[str]) -> Approval:
    """Return settings that stop a run before any call of the named tools, for approval.

    The run interrupts (``RunResult.status == "interrupted"``) with the payload
    ``{"approval": {"tool": name, "arguments": {...}, "call_id": id}}``. Resume it with
    ``True`` (the tool runs), ``False`` (its result is the error ``APPROVAL_DENIED``; no tool
    budget is spent) or ``{"approved": True, "arguments": {...}}`` (it runs with the edited
    arguments). Selection and existence are checked before asking; the tool budget after.

    Raises:
        TypeError: ``names`` is a str, or holds something that is not a non-empty str.
    """
    if isinstance(names, str):
        raise TypeError("require_approval takes a collection of tool names, not a str")
    return Approval(frozenset(names))
