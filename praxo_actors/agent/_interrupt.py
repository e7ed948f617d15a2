"""People in the loop: a tool's :class:`Interrupt`, an approval, and the pending run they leave.

A run that interrupts stops where it is and returns a ``RunResult`` with ``status ==
"interrupted"``. Its session holds everything done so far (the user's message, the model's
calls, the results before the interrupted call) and, under the metadata key
``"praxo.pending"``, where to go on from: the step, the call, the counters. It is plain JSON, so
it is kept by checkpoints and the session log like any metadata, through passivation and
restarts. Resuming starts the same run (same ``run_id``) at that call, with the resume value as
its result (or, for an approval, the decision).
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

from praxo_actors._errors import AgentError, CheckpointError, JSONError
from praxo_actors.codes import AGENT_INVALID_RESUME, CHECKPOINT_INVALID
from praxo_actors.core import encode_json
from praxo_actors.models import Session, ToolCall

__all__ = ["PENDING_KEY", "Interrupt", "Pending", "pending_of", "resume_value"]

PENDING_KEY: Final = "praxo.pending"


class Interrupt:
    """Return ``Interrupt(payload)`` from a tool handler to stop the run and ask a person.

    ``payload`` (a JSON value) becomes ``RunResult.interrupt``; the value given to ``resume``
    becomes this tool call's result.
    """

    __slots__ = ("payload",)

    def __init__(self, payload: Any = None) -> None:
        try:
            encode_json(payload)
        except JSONError as exc:
            raise TypeError(f"an Interrupt's payload must be JSON: {exc}") from None
        self.payload = payload

    def __repr__(self) -> str:
        return f"Interrupt({self.payload!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Interrupt) and other.payload == self.payload

    __hash__ = None  # type: ignore[assignment]


class Pending(msgspec.Struct, frozen=True):
    """Where an interrupted run goes on from (kept in the session's metadata)."""

    run_id: str
    kind: Literal["tool", "approval"]
    step: int
    index: int
    calls: list[ToolCall]
    payload: Any = None
    model_calls: int = 0
    tool_calls: int = 0
    usage: dict[str, int] = {}
    seq: int = 0  # the run's next event number: a resumed run numbers on
    tool_retries: int = 0


class _BadPending(CheckpointError, AgentError):
    """``CHECKPOINT_INVALID`` for a pending record; an AgentError too, as it was before."""


def pending_of(session: Session) -> Pending | None:
    """Return the session's pending (interrupted) run, or None.

    Raises:
        CheckpointError: ``CHECKPOINT_INVALID`` for a pending record of the wrong shape (also an
            ``AgentError``).
    """
    raw = session.metadata.get(PENDING_KEY) if isinstance(session.metadata, dict) else None
    if raw is None:
        return None
    try:
        return msgspec.convert(raw, Pending)
    except msgspec.ValidationError as exc:
        raise _BadPending(CHECKPOINT_INVALID, f"the pending run is malformed: {exc}") from None


def with_pending(metadata: dict[str, Any], pending: Pending | None) -> dict[str, Any]:
    """Return ``metadata`` with the pending run set (or removed, for None)."""
    out = {k: v for k, v in metadata.items() if k != PENDING_KEY}
    if pending is not None:
        raw = msgspec.to_builtins(pending)
        if not raw["tool_retries"]:
            del raw["tool_retries"]  # written only when used: records from before it are alike
        out[PENDING_KEY] = raw
    return out


def resume_value(pending: Pending, value: Any, run_id: str) -> Any:
    """Check a resume value against what the run waits for; return it normalised.

    For an approval: ``(approved, arguments or None)``.

    Raises:
        AgentError: ``AGENT_INVALID_RESUME`` for a value that is not JSON, or not a decision.
    """
    try:
        encode_json(value)
    except JSONError as exc:
        raise AgentError(
            AGENT_INVALID_RESUME, f"a resume value must be JSON: {exc}", run_id
        ) from None
    if pending.kind == "tool":
        return value
    if isinstance(value, bool):
        return (value, None)
    if isinstance(value, dict) and isinstance(value.get("approved"), bool):
        arguments = value.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise AgentError(AGENT_INVALID_RESUME, "edited arguments must be an object", run_id)
        return (value["approved"], arguments)
    raise AgentError(
        AGENT_INVALID_RESUME,
        'an approval is resumed with True, False or {"approved": bool, "arguments": {...}}',
        run_id,
    )
