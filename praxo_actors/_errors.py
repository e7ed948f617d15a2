"""The root exception and its families; every failure carries a stable ``.code``."""

from __future__ import annotations

__all__ = [
    "AgentError",
    "CheckpointError",
    "CompactionError",
    "JSONError",
    "MemoryStoreError",
    "PathPolicyError",
    "PraxoError",
    "ProtocolError",
    "RuntimeLimitError",
    "SchedulerClosedError",
    "SessionBusyError",
    "SessionOverloadedError",
    "ToolCallError",
]


class PraxoError(Exception):
    """Root of every error this project defines.

    Args:
        code: Stable machine-readable code, e.g. ``"JSON_INVALID"``.
        message: Human-readable explanation; defaults to the code.
    """

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message or code

    def __reduce__(self) -> tuple[type[PraxoError], tuple[str, str]]:
        return (type(self), (self.code, self.message))


class JSONError(PraxoError):
    """Invalid JSON, or no JSON found in model output."""


class ToolCallError(PraxoError):
    """Tool-call markup that cannot be parsed, or a tool-call format that does not exist.

    Codes: ``TOOL_CALL_NOT_FOUND``, ``TOOL_CALL_INVALID_JSON``, ``TOOL_CALL_INVALID_ARGUMENTS``,
    ``TOOL_CALL_INVALID_NAME``, ``TOOL_CALL_MALFORMED``, ``TOOL_CALL_UNKNOWN_FORMAT``.
    """


class PathPolicyError(PraxoError):
    """A path refused by a :class:`~praxo_actors.core.PathPolicy`."""


class CheckpointError(PraxoError):
    """A checkpoint that cannot be (or must not be) loaded."""


class CompactionError(PraxoError):
    """Context compaction failed, e.g. a summariser returned no text."""


class MemoryStoreError(PraxoError):
    """Invalid namespace, key or value given to a memory store."""


class AgentError(PraxoError):
    """An agent run that failed with a code.

    Args:
        code: Stable code, e.g. ``"AGENT_MAX_STEPS"`` or a model's own code.
        message: Human-readable explanation.
        run_id: The id of the failed run, when one was assigned.
    """

    def __init__(self, code: str, message: str = "", run_id: str | None = None) -> None:
        super().__init__(code, message)
        self.run_id = run_id

    def __reduce__(self) -> tuple[type[AgentError], tuple[str, str, str | None]]:  # type: ignore[override]
        return (type(self), (self.code, self.message, self.run_id))


class ProtocolError(PraxoError):
    """A runtime message that cannot be decoded (unknown tag, bad shape)."""


class RuntimeLimitError(PraxoError):
    """The runtime refused new work: ``RUNTIME_SESSION_LIMIT``."""


class SchedulerClosedError(PraxoError):
    """An actor started on a scheduler that was shut down: ``RUNTIME_SCHEDULER_CLOSED``."""


class SessionBusyError(PraxoError):
    """A session with ``on_busy="reject"`` is already running: ``SESSION_BUSY``."""


class SessionOverloadedError(PraxoError):
    """A session's queue is full: ``SESSION_OVERLOADED``."""
