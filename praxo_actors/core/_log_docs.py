"""The documents of a session log: snapshots and run records, signed to their place in the log.

A session's durable state is a *snapshot* (the whole session as of log version ``b``) plus the
*run records* ``b+1 … v``, each holding the messages one committed run added. Both are tagged
JSON with the structs of :mod:`praxo_actors.core._checkpoint` (same tags, same allowlist)::

    {"format": "praxo.snapshot", "version": 1, "log_version": b, "session": {...}, "signature": …}
    {"format": "praxo.record", "version": 1, "session_id": s, "seq": n, "run_id": r,
     "messages": [...], "signature": …}

With a key, the signature covers the session id and the position too, so a store writer can
neither move one session's documents into another's log (``CHECKPOINT_SIGNATURE``) nor reorder
records. A 0.1 checkpoint (``"format": "praxo.checkpoint"``) loads as a snapshot at version 0.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Final

import msgspec

from praxo_actors._errors import CheckpointError
from praxo_actors.codes import CHECKPOINT_TYPE_NOT_ALLOWED, CHECKPOINT_VERSION
from praxo_actors.core._checkpoint import (
    FORMAT as CHECKPOINT_FORMAT,
)
from praxo_actors.core._checkpoint import (
    _check_key,
    _encoder,
    _message_doc,
    _session_doc,
    _sign,
    _verify,
    load_checkpoint,
)
from praxo_actors.core._checkpoint_read import (
    _array,
    _decode,
    _invalid,
    _revive_message,
    _revive_session,
)
from praxo_actors.models import Message, Session

__all__ = ["dump_record", "dump_snapshot", "load_record", "load_snapshot"]

SNAPSHOT: Final = "praxo.snapshot"
RECORD: Final = "praxo.record"
_SNAPSHOT_KEYS = frozenset({"format", "version", "log_version", "session", "signature"})
_RECORD_KEYS = frozenset(
    {"format", "version", "session_id", "seq", "run_id", "messages", "signature"}
)


def _finish(doc: dict[str, Any], key: bytes | None) -> str:
    try:
        body = _encoder.encode(doc)
    except (RecursionError, ValueError, TypeError, msgspec.MsgspecError) as exc:
        raise _invalid(f"cannot be written: {exc}") from None
    if key is not None:
        doc["signature"] = _sign(key, body)
        body = _encoder.encode(doc)
    return body.decode()


def dump_snapshot(session: Session, log_version: int, key: bytes | None = None) -> str:
    """Return ``session`` as a snapshot document at ``log_version`` (signed with ``key``)."""
    _check_key(key)
    metadata = session.metadata
    if not isinstance(metadata, dict):
        raise _invalid(f"metadata must be a dict, got {type(metadata).__name__}")
    try:
        doc = {
            "format": SNAPSHOT,
            "version": 1,
            "log_version": log_version,
            "session": _session_doc(session, metadata),
        }
    except (RecursionError, ValueError, TypeError, msgspec.MsgspecError) as exc:
        raise _invalid(f"session cannot be written: {exc}") from None
    return _finish(doc, key)


def dump_record(
    session_id: str,
    seq: int,
    run_id: str,
    messages: Sequence[Message],
    key: bytes | None = None,
) -> str:
    """Return the record of one committed run: the ``messages`` it added, at position ``seq``."""
    _check_key(key)
    try:
        doc = {
            "format": RECORD,
            "version": 1,
            "session_id": session_id,
            "seq": seq,
            "run_id": run_id,
            "messages": [_message_doc(m) for m in messages],
        }
    except (RecursionError, ValueError, TypeError, msgspec.MsgspecError) as exc:
        raise _invalid(f"record cannot be written: {exc}") from None
    return _finish(doc, key)


def load_snapshot(
    text: str,
    session_id: str,
    allowed_types: Collection[str],
    key: bytes | None = None,
) -> tuple[Session, int]:
    """Revive a snapshot (or a 0.1 checkpoint) of ``session_id``; return it and its version.

    Raises:
        CheckpointError: As :func:`load_checkpoint`; ``CHECKPOINT_SIGNATURE`` (with a key) or
            ``CHECKPOINT_INVALID`` (without) for another session's document.
    """
    doc = _decode(text)
    if doc.get("format") == CHECKPOINT_FORMAT:
        session = load_checkpoint(text, allowed_types=allowed_types, key=key)
        version = 0
    else:
        if key is not None:
            _verify(doc, key)
        _header(doc, SNAPSHOT, _SNAPSHOT_KEYS)
        log_version = doc.get("log_version")
        if type(log_version) is not int or log_version < 0:
            raise _invalid("log_version must be a non-negative integer")
        version = log_version
        if "session" not in doc:
            raise _invalid("no session")
        session = _revive_session(doc["session"], allowed_types)
    if session.id != session_id:
        # Signed for another session's place: with a key, that is a forgery.
        code = "CHECKPOINT_SIGNATURE" if key is not None else "CHECKPOINT_INVALID"
        raise CheckpointError(code, f"the state stored for {session_id!r} is another session's")
    return session, version


def load_record(
    text: str,
    session_id: str,
    seq: int,
    allowed_types: Collection[str],
    key: bytes | None = None,
) -> list[Message]:
    """Revive the messages of record ``seq`` of ``session_id``.

    Raises:
        CheckpointError: ``CHECKPOINT_SIGNATURE``, ``CHECKPOINT_VERSION``, ``CHECKPOINT_INVALID``
            (also for a record of another session or position) or ``CHECKPOINT_TYPE_NOT_ALLOWED``.
    """
    doc = _decode(text)
    if key is not None:
        _verify(doc, key)
    _header(doc, RECORD, _RECORD_KEYS)
    if doc.get("session_id") != session_id or doc.get("seq") != seq:
        code = "CHECKPOINT_SIGNATURE" if key is not None else "CHECKPOINT_INVALID"
        raise CheckpointError(code, f"record {seq} of {session_id!r} is stored out of place")
    if "messages" not in doc:
        raise _invalid("record has no messages")
    if "message" not in allowed_types:
        raise CheckpointError(CHECKPOINT_TYPE_NOT_ALLOWED, "type 'message' is not allowed")
    return [_revive_message(m, allowed_types) for m in _array(doc["messages"], "messages")]


def _header(doc: dict[str, Any], fmt: str, keys: frozenset[str]) -> None:
    if doc.get("format") != fmt:
        raise CheckpointError(CHECKPOINT_VERSION, f"unknown format {doc.get('format')!r:.80}")
    if type(doc.get("version")) is not int or doc["version"] != 1:
        raise CheckpointError(CHECKPOINT_VERSION, f"unknown version {doc.get('version')!r:.80}")
    extra = sorted(set(doc) - keys)
    if extra:
        raise _invalid(f"unknown top-level fields {extra}")
