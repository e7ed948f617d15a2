"""The root exception of ``supervisors``; every failure carries a stable ``.code``."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

__all__ = ["CODES", "SupervisorError"]


class SupervisorError(Exception):
    """Root of every error this package defines.

    Codes:
        ``SUPERVISOR_INVALID_SPEC``: a bad child spec, supervisor flag or argument.
        ``SUPERVISOR_START_FAILED``: a child did not start (its start raised, its
        ``on_start`` failed, or it did not answer within ``start_timeout``).
        ``SUPERVISOR_MAX_CHILDREN``: a dynamic supervisor is full.
        ``SUPERVISOR_CHILD_NOT_FOUND``: no child with that id (or ref).
        ``SUPERVISOR_CHILD_RUNNING``: restart or delete of a running child.
        ``SUPERVISOR_CHILD_RESTARTING``: restart or delete of a child whose restart is pending.
        ``SUPERVISOR_CHILD_EXISTS``: a child with that id is already present or running.
        ``SUPERVISOR_MAX_RESTARTS``: the exception a supervisor exits with when its restart
        intensity is exceeded (its own supervisor sees it in ``Down.exception``).
        ``SUPERVISOR_NAME_TAKEN``: a registry name is already registered.
        ``SUPERVISOR_NOT_RUNNING``: the actor given is not running.

    Args:
        code: Stable machine-readable code, e.g. ``"SUPERVISOR_START_FAILED"``.
        message: Human-readable explanation; defaults to the code.
    """

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message or code

    def __reduce__(self) -> tuple[type[SupervisorError], tuple[str, str]]:
        return (type(self), (self.code, self.message))


INVALID_SPEC = "SUPERVISOR_INVALID_SPEC"
START_FAILED = "SUPERVISOR_START_FAILED"
MAX_CHILDREN = "SUPERVISOR_MAX_CHILDREN"
CHILD_NOT_FOUND = "SUPERVISOR_CHILD_NOT_FOUND"
CHILD_RUNNING = "SUPERVISOR_CHILD_RUNNING"
CHILD_RESTARTING = "SUPERVISOR_CHILD_RESTARTING"
CHILD_EXISTS = "SUPERVISOR_CHILD_EXISTS"
MAX_RESTARTS = "SUPERVISOR_MAX_RESTARTS"
NAME_TAKEN = "SUPERVISOR_NAME_TAKEN"
NOT_RUNNING = "SUPERVISOR_NOT_RUNNING"

CODES: Final[Mapping[str, str]] = MappingProxyType(
    {
        CHILD_EXISTS: "a child with that id is already present or running",
        CHILD_NOT_FOUND: "no child with that id (or ref)",
        CHILD_RESTARTING: "restart or delete of a child whose restart is pending",
        CHILD_RUNNING: "restart or delete of a running child",
        INVALID_SPEC: "a bad child spec, supervisor flag or argument",
        MAX_CHILDREN: "a dynamic supervisor is full",
        MAX_RESTARTS: "the restart intensity was exceeded",
        NAME_TAKEN: "a registry name is already registered",
        NOT_RUNNING: "the actor given is not running",
        START_FAILED: "a child did not start",
    }
)
"""Every code :class:`SupervisorError` carries, with what it means (all carried by that class)."""
