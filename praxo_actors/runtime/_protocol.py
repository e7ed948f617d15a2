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
from praxo_actors.models import Event, Message

__all__ = [
    "CancelRun",
    "Crash",
    "EffectDone",
    "FlushCheckpoints",
    "GetHistory",
    "History",
    "LoadCheckpoint",
    "Passivate",
    "Publish",
    "RuntimeMessage",
    "SaveCheckpoint",
    "StartRun",
    "decode",
    "encode",
]


class _Msg(msgspec.Struct, frozen=True, tag_field="t"):
    """Base of every runtime message; ``t`` carries the tag."""


class StartRun(_Msg, frozen=True, tag="start_run"):
    """Queue a run of ``input`` by agent ``agent``; ``deadline_ns`` is a ``time.monotonic_ns``."""

    run_id: str
    agent: str
    input: str
    deadline_ns: int | None = None


class CancelRun(_Msg, frozen=True, tag="cancel_run"):
    """Cancel a queued or running run (cooperatively, between steps)."""

    run_id: str


class EffectDone(_Msg, frozen=True, tag="effect_done"):
    """A callback of run ``run_id`` finished; its result waits in local slot ``token``.

    Callback results are user objects (a tool may return anything, a callback may raise), so
    they stay in the receiving session's own table and only this notice travels.
    """

    run_id: str
    token: int


class GetHistory(_Msg, frozen=True, tag="get_history"):
    """Ask a session for its committed messages."""


class History(_Msg, frozen=True, tag="history"):
    """A session's reply to :class:`GetHistory`."""

    messages: list[Message]


class Passivate(_Msg, frozen=True, tag="passivate"):
    """Checkpoint and stop if idle (``idle_ns`` is the minimum idle time; 0: any idle session)."""

    idle_ns: int = 0


class Crash(_Msg, frozen=True, tag="crash"):
    """Fail the receiving actor on purpose (a test hook for crash recovery)."""

    reason: str = "crash requested"


class Publish(_Msg, frozen=True, tag="publish"):
    """Deliver events to the event bus's subscribers."""

    events: list[Event]


class SaveCheckpoint(_Msg, frozen=True, tag="save_checkpoint"):
    """Store a session checkpoint document (JSON text) in the memory store."""

    session_id: str
    document: str
    run_id: str | None = None


class FlushCheckpoints(_Msg, frozen=True, tag="flush_checkpoints"):
    """Write the checkpoints the store actor has gathered, in one transaction."""


class LoadCheckpoint(_Msg, frozen=True, tag="load_checkpoint"):
    """Ask the memory store for a session's checkpoint document (reply: str or None)."""

    session_id: str


RuntimeMessage = (
    StartRun
    | CancelRun
    | EffectDone
    | GetHistory
    | History
    | Passivate
    | Crash
    | Publish
    | SaveCheckpoint
    | FlushCheckpoints
    | LoadCheckpoint
)

_encoder = msgspec.msgpack.Encoder()
_decoder: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(RuntimeMessage)


def encode(message: RuntimeMessage) -> bytes:
    """Encode a runtime message to bytes."""
    return _encoder.encode(message)


def decode(data: bytes) -> RuntimeMessage:
    """Decode bytes into a runtime message.

    Raises:
        ProtocolError: ``PROTOCOL_INVALID_MESSAGE`` for non-bytes, an unknown tag or a bad shape.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ProtocolError(
            "PROTOCOL_INVALID_MESSAGE", f"expected encoded bytes, got {type(data).__name__}"
        )
    try:
        message: RuntimeMessage = _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise ProtocolError("PROTOCOL_INVALID_MESSAGE", str(exc)) from None
    return message
