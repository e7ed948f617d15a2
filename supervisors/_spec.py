"""Child specifications: what a supervisor starts, when it restarts it, how it stops it."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

import pykka

from supervisors._errors import INVALID_SPEC, SupervisorError

__all__ = ["ChildSpec", "ChildType", "Restart"]

Restart = Literal["permanent", "transient", "temporary"]
ChildType = Literal["worker", "supervisor"]

RESTARTS: frozenset[str] = frozenset(get_args(Restart))
CHILD_TYPES: frozenset[str] = frozenset(get_args(ChildType))


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """Describe one child of a supervisor, as OTP's child specification does.

    Args:
        id: The child's identifier, unique within its supervisor.
        start: A callable that starts the child and returns its Pykka ``ActorRef``.
        restart: ``"permanent"`` (always restarted), ``"transient"`` (restarted only after a
            crash) or ``"temporary"`` (never restarted; its spec is dropped when it ends).
        shutdown: Seconds the child gets to stop before it is abandoned.
        type: ``"worker"`` or ``"supervisor"`` (counted apart by ``count_children``).
        significant: Whether the child's exit counts for the supervisor's
            ``auto_shutdown``; only transient and temporary children may be significant.
        start_timeout: Seconds the child gets to run ``on_start`` and answer its first message.

    Raises:
        SupervisorError: ``SUPERVISOR_INVALID_SPEC`` for any bad value.
    """

    id: str
    start: Callable[[], pykka.ActorRef[Any]]
    restart: Restart = "permanent"
    shutdown: float = 5.0
    type: ChildType = "worker"
    significant: bool = False
    start_timeout: float = 5.0

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            _invalid(f"id must be a str, got {self.id!r}")
        if not callable(self.start):
            _invalid(f"child {self.id!r}: start must be callable, got {self.start!r}")
        if self.restart not in RESTARTS:
            _invalid(f"child {self.id!r}: invalid restart type {self.restart!r}")
        if self.type not in CHILD_TYPES:
            _invalid(f"child {self.id!r}: invalid child type {self.type!r}")
        if not isinstance(self.significant, bool):
            _invalid(f"child {self.id!r}: significant must be a bool")
        if self.significant and self.restart == "permanent":
            _invalid(f"child {self.id!r}: a permanent child cannot be significant")
        for field in ("shutdown", "start_timeout"):
            value = getattr(self, field)
            if not is_positive_seconds(value):
                _invalid(f"child {self.id!r}: {field} must be a positive number, got {value!r}")


def is_positive_seconds(value: object) -> bool:
    """Return whether ``value`` is a finite, positive number of seconds (bools excluded)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def _invalid(message: str) -> None:
    raise SupervisorError(INVALID_SPEC, message)
