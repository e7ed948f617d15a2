"""Revive a session from its log (snapshot + run records), and write a run's commit.

The session actor owns its log position: it restores with :func:`revive`, and after each run
builds the :class:`~praxo_actors.memory._log.Commit` with :func:`run_commit`, which writes only
the run's own messages unless the records have outgrown the snapshot (then a new snapshot, so
that a restore reads at most about twice the session's size).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Collection
from typing import Any

import msgspec

from praxo_actors._errors import CheckpointError, PraxoError
from praxo_actors.codes import CHECKPOINT_INVALID, CHECKPOINT_STALE
from praxo_actors.core._checkpoint import DEFAULT_CHECKPOINT_TYPES
from praxo_actors.core._log_docs import dump_record, dump_snapshot, load_record, load_snapshot
from praxo_actors.core._schema_types import json_value
from praxo_actors.memory._log import MAX_RECORDS, Commit, SessionLog, StoredSession
from praxo_actors.models import RunResult, Session

__all__ = [
    "LogPosition",
    "partial_commit",
    "read_session",
    "result_document",
    "revive",
    "run_commit",
]

# A new snapshot once the records since the last one hold more bytes than it, or
# MAX_RECORDS of them (a head claiming more is refused on reading).
# Below this size a snapshot is cheaper than keeping records apart.
SMALL_SNAPSHOT = 2048


class LogPosition(msgspec.Struct):
    """Where a live session stands in its log, and what its last snapshot costs to rewrite.

    A Struct of ints: the collector does not track it (one object fewer per live session).
    """

    version: int = 0
    snapshot_bytes: int = 0
    record_bytes: int = 0
    records: int = 0


def revive(
    state: StoredSession | None,
    session_id: str,
    allowed_types: Collection[str],
    key: bytes | None,
    min_version: int = 0,
) -> tuple[Session, LogPosition]:
    """Return the session a stored log holds, and its position.

    Raises:
        CheckpointError: Any checkpoint code for a bad document; ``CHECKPOINT_STALE`` when the
            log is older than ``min_version`` (a version this runtime saw committed).
    """
    if state is None:
        session, position = Session(id=session_id), LogPosition()
    else:
        if state.fault is not None:
            raise CheckpointError(CHECKPOINT_INVALID, f"the log of {session_id!r}: {state.fault}")
        if state.snapshot is not None:
            session, base = load_snapshot(state.snapshot, session_id, allowed_types, key)
            if base != state.base:
                raise CheckpointError(
                    CHECKPOINT_STALE,
                    f"the snapshot of {session_id!r} is at version {base}, not {state.base}",
                )
        elif state.base != 0:
            raise CheckpointError(CHECKPOINT_INVALID, f"the snapshot of {session_id!r} is gone")
        else:
            session = Session(id=session_id)
        position = LogPosition(
            version=state.version,
            snapshot_bytes=len(state.snapshot or ""),
            records=len(state.records),
        )
        if state.records:
            messages = list(session.messages)
            for seq, text in enumerate(state.records, state.base + 1):
                messages.extend(load_record(text, session_id, seq, allowed_types, key))
                position.record_bytes += len(text)
            session = Session(session_id, messages, session.metadata)
    if position.version < min_version:
        raise CheckpointError(
            CHECKPOINT_STALE,
            f"the log of {session_id!r} is at version {position.version}, "
            f"older than version {min_version} committed before",
        )
    return session, position


def run_commit(
    position: LogPosition,
    before: Session,
    result: RunResult,
    key: bytes | None,
    journal: int = -1,
    agent: str = "",
) -> Commit:
    """Return the commit of a completed run (of agent ``agent``) and move ``position`` past it.

    Raises:
        CheckpointError: ``CHECKPOINT_INVALID`` for a session that cannot be written.
    """
    after = result.session
    old, new = before.messages, after.messages
    n = len(old)
    seq = position.version + 1
    # The run added messages after the old ones, unless compaction rewrote the history (then
    # only a snapshot can hold it). Messages are frozen: identity is equality here.
    appended = len(new) >= n and (n == 0 or (new[0] is old[0] and new[n - 1] is old[n - 1]))
    if appended and after.metadata is not before.metadata and after.metadata != before.metadata:
        appended = False
    record = dump_record(after.id, seq, result.run_id, new[n:] if appended else [], key)
    snapshot = None
    size = position.record_bytes + len(record)
    if (
        not appended
        or position.records + 1 >= MAX_RECORDS
        or (size > position.snapshot_bytes and size > SMALL_SNAPSHOT)
    ):
        snapshot = dump_snapshot(after, seq, key)
    commit = Commit(
        session_id=after.id,
        expected=position.version,
        run_id=result.run_id,
        record=record,
        snapshot=snapshot,
        result=result_document(result, key=key, agent=agent),
        journal=journal,
        agent=agent,
    )
    position.version = seq
    if snapshot is None:
        position.records += 1
        position.record_bytes = size
    else:
        position.records = position.record_bytes = 0
        position.snapshot_bytes = len(snapshot)
    return commit


def partial_commit(
    position: LogPosition,
    before: Session,
    partial: Session,
    error: BaseException,
    run_id: str,
    session_id: str,
    key: bytes | None,
    journal: int,
) -> Commit | None:
    """Return the commit of the steps a run cut off by newer input completed, with its error
    kept as the run's outcome (None: the partial session cannot be written)."""
    result = RunResult(run_id=run_id, session=partial, output="")
    try:
        commit = run_commit(position, before, result, key, journal)
    except PraxoError:
        return None
    kept = result_document(None, error, run_id, session_id, key)
    return msgspec.structs.replace(commit, result=kept)


def result_document(
    result: RunResult | None,
    error: BaseException | None = None,
    run_id: str = "",
    session_id: str = "",
    key: bytes | None = None,
    agent: str = "",
) -> str | None:
    """Return what ``handle.result`` gives back later: the result's fields or the error's code
    (signed over the session id with a key, so that a store writer cannot forge an outcome).

    Typed structured output is kept as its JSON value, with the name of the ``agent`` whose
    output type reads it back (see :func:`~praxo_actors.runtime._front._results.run_result`); None
    when the result cannot be written as JSON.
    """
    doc: dict[str, object]
    if result is not None:
        try:
            structured = json_value(result.structured)
        except TypeError:
            return None
        doc = {
            "run_id": result.run_id,
            "output": result.output,
            "structured": structured,
            "steps": result.steps,
            "model_calls": result.model_calls,
            "tool_calls": result.tool_calls,
            "usage": result.usage,
        }
        if agent:
            doc["agent"] = agent
        if result.status != "completed":  # an interrupted run: what it asks, for a resume
            doc["status"] = result.status
            doc["interrupt"] = result.interrupt
    else:
        code = getattr(error, "code", None) or "AGENT_CALLBACK_EXCEPTION"
        message = str(getattr(error, "message", error))[:2000]
        doc = {"run_id": run_id, "error": {"code": code, "message": message}}
    try:
        if key is not None:
            doc["s"] = _result_signature(key, session_id or _session_of(result), doc)
        return _RESULTS.encode(doc).decode()
    except (TypeError, ValueError, msgspec.MsgspecError):
        return None


_RESULTS = msgspec.json.Encoder(order="sorted")


def _session_of(result: RunResult | None) -> str:
    return "" if result is None else result.session.id


def _result_signature(key: bytes, session_id: str, doc: dict[str, object]) -> str:
    unsigned = {k: v for k, v in doc.items() if k != "s"}
    body = _RESULTS.encode(["praxo.result", session_id, unsigned])
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def result_signed(doc: dict[str, object], session_id: str, key: bytes | None) -> bool:
    """Whether a kept result document is this session's (True without a key)."""
    if key is None:
        return True
    signature = doc.get("s")
    if not isinstance(signature, str):
        return False
    try:
        expected = _result_signature(key, session_id, doc)
    except (TypeError, ValueError, msgspec.MsgspecError):
        return False
    return hmac.compare_digest(signature, expected)


def read_session(
    store: Any,
    session_id: str,
    *,
    key: bytes | None = None,
    allowed_types: Collection[str] = DEFAULT_CHECKPOINT_TYPES,
) -> Session:
    """Return the session a store's log holds for ``session_id`` (empty if none).

    For tools and tests: a running runtime's own view is ``handle.history()``.

    Raises:
        CheckpointError: A stored document is invalid, forged (with ``key``) or not allowed.
    """
    state = SessionLog(store).load([session_id])[0]
    return revive(state, session_id, allowed_types, key)[0]
