"""The messages actors exchange: one tagged union of frozen msgspec Structs.

Every message between actors crosses as bytes: the sender encodes it and the receiver decodes
it, so no two actors ever share a mutable object (copy isolation, as between BEAM processes).
Encoder and decoder are built once per process; an unknown tag or a malformed message is
refused with :class:`~praxo_actors.PraxoError` code ``PROTOCOL_INVALID_MESSAGE``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from praxo_actors._errors import ProtocolError
from praxo_actors.agent._tool import ToolError
from praxo_actors.codes import PROTOCOL_INVALID_MESSAGE
from praxo_actors.memory._log import Accept, Commit, JournalAppend, PendingRun, StoredSession
from praxo_actors.models import Event, Message, ModelError, Response

__all__ = [
    "AcceptRun",
    "CancelRun",
    "CommitRun",
    "Crash",
    "EffectDone",
    "EffectDoneRaw",
    "FindRun",
    "FlushCheckpoints",
    "GetHistory",
    "GetInfo",
    "History",
    "Info",
    "JournalEffect",
    "Journaled",
    "LoadPending",
    "LoadResults",
    "LoadSessions",
    "Outcome",
    "Pending",
    "Publish",
    "Raised",
    "Restore",
    "Results",
    "Returned",
    "ReturnedModelError",
    "ReturnedObject",
    "ReturnedResponse",
    "ReturnedToolError",
    "RunDeadline",
    "RunFound",
    "RuntimeMessage",
    "Sessions",
    "StartRun",
    "StopRuns",
    "decode",
    "decode_effect",
    "decode_outcome",
    "encode",
    "encode_outcome",
]


class _Msg(msgspec.Struct, frozen=True, tag_field="t"):
    """Base of every runtime message; ``t`` carries the tag."""


class StartRun(_Msg, frozen=True, tag="start_run"):
    """Queue a run of ``input`` by agent ``agent``; ``deadline_ns`` is a ``monotonic_ns`` of the
    runtime's clock."""

    run_id: str
    agent: str
    input: str
    deadline_ns: int | None = None
    resume: str | None = None  # JSON of a resume value: go on with the interrupted run
    journal: bool = False  # a durable run that was submitted: accept it into the inbox first
    parent: str | None = None  # the calling session of an agent tool's child run (its events say)
    # Every session of an agent tool's call chain that waits for this run, outermost first
    # (``parent`` last): a call back into one of them would wait on itself (AGENT_CYCLE).
    chain: tuple[str, ...] = ()


class CancelRun(_Msg, frozen=True, tag="cancel_run"):
    """Cancel a queued or running run: between steps, or at once with ``hard`` (an ``async``
    callback in flight is then cancelled, a sync one's late outcome discarded)."""

    run_id: str
    hard: bool = False
    keep: bool = False  # keep the steps the run completed (on_busy="interrupt")


class StopRuns(_Msg, frozen=True, tag="stop_runs"):
    """End every run of the session now, with ``code``: the one in flight is cut off (its
    ``async`` callback cancelled) and publishes ``run.failed``; queued ones fail unstarted.
    The session's stop follows; ``RUNTIME_STOPPED`` writes nothing to the store."""

    code: str


class RunDeadline(_Msg, frozen=True, tag="run_deadline"):
    """A run's deadline has passed (told by the session's own timer)."""

    run_id: str


class ReturnedResponse(_Msg, frozen=True, tag="response"):
    """A model callback returned a :class:`~praxo_actors.models.Response`."""

    response: Response


class ReturnedModelError(_Msg, frozen=True, tag="model_error"):
    """A model callback returned a :class:`~praxo_actors.models.ModelError`."""

    error: ModelError


class ReturnedToolError(_Msg, frozen=True, tag="tool_error"):
    """A tool returned a :class:`~praxo_actors.agent.ToolError`."""

    error: ToolError


class Returned(_Msg, frozen=True, tag="returned"):
    """A callback returned any other value (a tool's JSON, a summary, a repaired text)."""

    value: Any


class ReturnedObject(_Msg, frozen=True, tag="returned_object"):
    """A callback returned a value that is not JSON (named by ``type``).

    The value travels beside this notice, unchanged, so that the agent loop answers it exactly
    as ``run_agent`` would (for a tool: a ``TypeError``, "not JSON").
    """

    type: str


class Raised(_Msg, frozen=True, tag="raised"):
    """A callback raised: its type and text.

    The exception itself travels beside this notice in the same actor message, unchanged
    (see :mod:`praxo_actors.runtime._session._outcome`).
    """

    text: str


Outcome = (
    ReturnedResponse | ReturnedModelError | ReturnedToolError | Returned | ReturnedObject | Raised
)


class EffectDone(_Msg, frozen=True, tag="effect_done"):
    """A callback of run ``run_id`` finished with ``outcome``.

    The outcome travels in the message itself (a copy, as every message is), encoded and
    decoded with it, once. A malformed value from user code (a ``Response`` whose fields have
    the wrong types, a value nested too deep) fails only that run, never the session: when the
    message does not decode, :func:`decode_effect` reads it again with the outcome left
    encoded (:class:`EffectDoneRaw`), for the session to fail the run with why. The session
    ignores an outcome whose token is no longer the call it waits for (a cancelled or
    timed-out call).
    """

    run_id: str
    token: int
    outcome: Outcome


class EffectDoneRaw(_Msg, frozen=True, tag="effect_done"):
    """An :class:`EffectDone` read with its outcome left encoded (see :func:`decode_effect`)."""

    run_id: str
    token: int
    outcome: msgspec.Raw


class Restore(_Msg, frozen=True, tag="restore"):
    """The session's stored log (None: a new session); the first thing it handles.

    ``min_version`` is the log version this runtime last saw the session commit: an older log
    is a rollback (``CHECKPOINT_STALE``).
    """

    state: StoredSession | None
    min_version: int = 0


class Journaled(_Msg, frozen=True, tag="journaled"):
    """The store holds the first ``entries`` journal entries of durable run ``run_id``."""

    run_id: str
    entries: int


class GetHistory(_Msg, frozen=True, tag="get_history"):
    """Ask a session for its committed messages."""


class History(_Msg, frozen=True, tag="history"):
    """A session's reply to :class:`GetHistory`."""

    messages: list[Message]


class GetInfo(_Msg, frozen=True, tag="get_info"):
    """Ask a session what it is doing (reply: :class:`Info`)."""


class Info(_Msg, frozen=True, tag="info"):
    """A session's reply to :class:`GetInfo`."""

    restored: bool
    agent: str | None
    queued_runs: int
    running_run_id: str | None
    messages: int
    pending_interrupt: Any = None
    pending_run_id: str | None = None


class Crash(_Msg, frozen=True, tag="crash"):
    """Fail the receiving actor on purpose (a test hook for crash recovery)."""

    reason: str = "crash requested"


class Publish(_Msg, frozen=True, tag="publish"):
    """Deliver events to the event bus's subscribers."""

    events: list[Event]


class CommitRun(_Msg, frozen=True, tag="commit_run"):
    """Write a session's change (a run's record, result, journal drop) to the session log."""

    commit: Commit


class JournalEffect(_Msg, frozen=True, tag="journal_effect"):
    """Journal a durable run's completed effect (or its start) before its next step."""

    append: JournalAppend


class AcceptRun(_Msg, frozen=True, tag="accept_run"):
    """Add a durable run accepted by ``submit`` to its session's inbox in the session log."""

    accept: Accept


class FlushCheckpoints(_Msg, frozen=True, tag="flush_checkpoints"):
    """Write the commits and journal entries the store actor has gathered, in one change."""


class LoadSessions(_Msg, frozen=True, tag="load_sessions"):
    """Ask the store actor for many sessions' logs at once (reply: :class:`Sessions`)."""

    session_ids: list[str]


class Sessions(_Msg, frozen=True, tag="sessions"):
    """The store's reply to :class:`LoadSessions`: one stored log (or None) per session id."""

    states: list[StoredSession | None]


class LoadPending(_Msg, frozen=True, tag="load_pending"):
    """Ask for every session with a durable run in progress (reply: :class:`Pending`)."""


class Pending(_Msg, frozen=True, tag="pending"):
    """The store's reply to :class:`LoadPending`: session ids and their runs, in id order."""

    sessions: list[str]
    runs: list[PendingRun]


class LoadResults(_Msg, frozen=True, tag="load_results"):
    """Ask for the kept results of a session's last runs (reply: :class:`Results`)."""

    session_id: str


class Results(_Msg, frozen=True, tag="results"):
    """The store's reply to :class:`LoadResults`: result documents (JSON text)."""

    documents: list[str]


class FindRun(_Msg, frozen=True, tag="find_run"):
    """Ask which session keeps or holds run ``run_id`` (reply: :class:`RunFound`)."""

    run_id: str


class RunFound(_Msg, frozen=True, tag="run_found"):
    """The store's reply to :class:`FindRun`: the session's id, None if no session knows it."""

    session_id: str | None


RuntimeMessage = (
    StartRun
    | CancelRun
    | StopRuns
    | RunDeadline
    | EffectDone
    | Restore
    | GetHistory
    | History
    | GetInfo
    | Info
    | Crash
    | Publish
    | Journaled
    | CommitRun
    | JournalEffect
    | AcceptRun
    | FlushCheckpoints
    | LoadSessions
    | Sessions
    | LoadPending
    | Pending
    | LoadResults
    | Results
    | FindRun
    | RunFound
)

_encoder = msgspec.msgpack.Encoder()
_BUFFERS = (bytes, bytearray, memoryview)
_decoder: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(RuntimeMessage)
_outcome_decoder: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(Outcome)


def encode_outcome(outcome: Outcome) -> bytes:
    """Encode a callback's outcome (the ``outcome`` of an :class:`EffectDone`)."""
    return _encoder.encode(outcome)


def decode_outcome(data: bytes | msgspec.Raw) -> Outcome:
    """Decode a callback's outcome.

    Raises:
        ProtocolError: ``PROTOCOL_INVALID_MESSAGE`` for a value of the wrong shape.
    """
    try:
        outcome: Outcome = _outcome_decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise ProtocolError(PROTOCOL_INVALID_MESSAGE, str(exc)) from None
    return outcome


_effect_decoder: msgspec.msgpack.Decoder[EffectDoneRaw] = msgspec.msgpack.Decoder(EffectDoneRaw)


def decode_effect(data: bytes) -> EffectDoneRaw | None:
    """Read an :class:`EffectDone` that :func:`decode` refused, its outcome left encoded; None
    if the message is not one (the outcome, read with :func:`decode_outcome`, says what is
    wrong with it)."""
    try:
        return _effect_decoder.decode(data)
    except (msgspec.DecodeError, RecursionError, TypeError):  # TypeError: not bytes at all
        return None


def encode(message: RuntimeMessage) -> bytes:
    """Encode a runtime message to bytes."""
    return _encoder.encode(message)


def decode(data: bytes) -> RuntimeMessage:
    """Decode bytes into a runtime message.

    Raises:
        ProtocolError: ``PROTOCOL_INVALID_MESSAGE`` for non-bytes, an unknown tag or a bad shape.
    """
    if type(data) is not bytes and not isinstance(data, _BUFFERS):
        raise ProtocolError(
            PROTOCOL_INVALID_MESSAGE, f"expected encoded bytes, got {type(data).__name__}"
        )
    try:
        message: RuntimeMessage = _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise ProtocolError(PROTOCOL_INVALID_MESSAGE, str(exc)) from None
    return message
