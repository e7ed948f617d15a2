"""The session log's vocabulary: its namespaces and limits, and the messages that change it.

A :class:`Commit` (one session's change after a run) and a :class:`JournalAppend` (a durable
run's completed effect) are built by the session and carried to the store as they are; a
:class:`PendingRun` is signed over its session id with the checkpoint key, so that a writer to
the store cannot forge a run to resume.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TypeVar

import msgspec

from praxo_actors.memory._inbox import AcceptedRun

__all__ = [
    "HEADS",
    "JOURNAL",
    "MAX_ENTRIES",
    "MAX_RECORDS",
    "PENDING",
    "RECORDS",
    "RESULTS",
    "RESULTS_KEPT",
    "SNAPSHOTS",
    "Commit",
    "JournalAppend",
    "PendingRun",
    "StoredSession",
    "pending_signed",
    "sign_pending",
]

HEADS = ("praxo", "heads")
SNAPSHOTS = ("praxo", "sessions")
RECORDS = ("praxo", "records")
PENDING = ("praxo", "pending")
JOURNAL = ("praxo", "journal")
RESULTS = ("praxo", "results")

RESULTS_KEPT = 100
"""How many runs' results each session keeps for ``handle.result``."""

MAX_RECORDS = 1000
"""Records a log keeps after its snapshot at most: the commit that would reach it writes a
snapshot instead. A head claiming more is broken (and reading them all would not end)."""

MAX_ENTRIES = 100_000
"""Journal entries one run may hold; a pending run claiming more is broken."""

_ENCODER = msgspec.json.Encoder(order="sorted")


class PendingRun(msgspec.Struct, frozen=True):
    """A durable run that started and has not ended: what is needed to run it again."""

    run_id: str
    agent: str
    input: str
    entries: int = 0
    resumes: int = 0
    resume: str | None = None  # the resume value (JSON) when the run goes on from an interrupt
    sig: str | None = None  # with a checkpoint key: signed over the session id and the rest


Signed = TypeVar("Signed", PendingRun, AcceptedRun)


def _pending_body(pending: PendingRun | AcceptedRun, session_id: str) -> bytes:
    fields = msgspec.structs.asdict(pending)
    fields.pop("sig")
    tag = "praxo.pending" if type(pending) is PendingRun else "praxo.accepted"
    return _ENCODER.encode([tag, session_id, fields])


def sign_pending(pending: Signed, session_id: str, key: bytes | None) -> Signed:
    """Return ``pending`` (or an accepted run) signed for ``session_id`` (unchanged without a
    key)."""
    if key is None:
        return pending
    sig = hmac.new(key, _pending_body(pending, session_id), hashlib.sha256).hexdigest()
    return msgspec.structs.replace(pending, sig=sig)


def pending_signed(pending: PendingRun | AcceptedRun, session_id: str, key: bytes | None) -> bool:
    """Whether ``pending`` (or an accepted run) carries a valid signature for ``session_id``
    (True without a key)."""
    if key is None:
        return True
    if not isinstance(pending.sig, str):
        return False
    expected = hmac.new(key, _pending_body(pending, session_id), hashlib.sha256).hexdigest()
    return hmac.compare_digest(pending.sig, expected)


class StoredSession(msgspec.Struct, frozen=True):
    """What the log holds for one session (documents still to be verified and revived)."""

    snapshot: str | None = None
    base: int = 0
    records: list[str] = []
    version: int = 0
    results: int = 0
    pending: PendingRun | None = None
    journal: list[str] = []
    fault: str | None = None  # why the stored shape cannot be a real log (nothing was read)
    agent: str | None = None  # the agent of the last run committed
    inbox: list[AcceptedRun] = []  # accepted runs not yet begun, in order


class Commit(msgspec.Struct, frozen=True):
    """One session's change: a run's record (versioned), a result, a journal to drop.

    With ``record`` set the commit is versioned: it applies only if the log is at ``expected``,
    and moves it to ``expected + 1``. ``snapshot`` (with ``record``) replaces the snapshot at
    that new version and drops every record it covers.

    ``record`` and ``result`` are the documents' JSON text as the session built them: the log
    stores each as its row, byte for byte (see :mod:`~praxo_actors.memory._log_rows`).
    """

    session_id: str
    expected: int = 0
    run_id: str | None = None
    record: str | None = None
    snapshot: str | None = None
    result: str | None = None
    journal: int = -1  # entries of the pending run to drop; -1: no pending run to clear
    agent: str = ""  # the agent of the run (kept in the head, for a restored session)
    inbox: str | None = None  # an accepted run that ended before it began: out of the inbox
    # The durable run a commit naming no run ended (a failure, settled already): its pending
    # entry and journal are dropped as ``run_id``'s would be.
    ends: str | None = None
    # The run whose outcome ``result`` keeps, when neither ``run_id`` nor ``ends`` names it (a
    # failure): indexed by its id.
    kept: str | None = None


class JournalAppend(msgspec.Struct, frozen=True):
    """Journal entry ``pending.entries - 1`` of a durable run (``entry`` None: the marker only)."""

    session_id: str
    pending: PendingRun
    entry: str | None = None
    accepted: bool = False  # the run's first write, of a run from the inbox: it leaves the inbox
