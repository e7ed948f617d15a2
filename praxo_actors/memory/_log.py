"""The session log kept in a memory store: snapshots, run records, run journals and results.

Per session id ``s``, in the store's documents (namespace / key → value):

- ``praxo/heads / s`` → ``{"version": v, "base": b, "results": n, "agent": a}``: the log's
  position. ``v`` counts the committed runs; absent, the session is at its snapshot's version.
  ``a`` names the agent of the last run committed (absent before one names it).
- ``praxo/sessions / s`` → ``{"checkpoint": <snapshot>, "version": b}``: the session as of
  version ``b`` (a 0.1 checkpoint document, with no ``version``, is a snapshot at 0).
- ``praxo/records / s#k`` → run ``k``'s record (the messages it added) for ``b < k <= v``,
  the document itself as the session built it (see :mod:`~praxo_actors.memory._log_rows`).
  A commit writes one record and the head, so it costs what the run added, not what the
  session holds; a compaction writes a new snapshot and drops the records it covers.
- ``praxo/pending / s`` → the durable run in progress and ``praxo/journal / s#i`` its completed
  effects, dropped by the commit that ends the run.
- ``praxo/inbox / s`` → ``{"runs": [...]}``: the session's *inbox*, the durable runs accepted
  (``submit``) and not yet begun, in order. An accepted run is added by one write; its first
  journal entry (which makes it the pending run) or the commit that ends it takes it out.
- ``praxo/results / s#j`` → the last 100 runs' results (each its result document), slot
  ``j = n mod 100``.
- ``praxo/runs / r`` → ``{"session": s, "n": n}``: which session keeps run ``r``'s result (see
  :mod:`~praxo_actors.memory._runs`).

Every change of one session — record, head, journal drop, result — is one :meth:`Store.apply`
(one transaction with SQLite), and commits are *versioned*: a commit names the version it was
built on and is refused with ``SESSION_CONFLICT`` when the log has moved on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from praxo_actors.memory._base import StoreBase, decode_text
from praxo_actors.memory._inbox import INBOX, Accept, AcceptedRun, read_inbox
from praxo_actors.memory._log_rows import doc_text, fault, key, pending_of, read_head, stored_text
from praxo_actors.memory._log_types import (
    HEADS,
    JOURNAL,
    MAX_ENTRIES,
    MAX_RECORDS,
    PENDING,
    RECORDS,
    RESULTS,
    RESULTS_KEPT,
    SNAPSHOTS,
    Commit,
    JournalAppend,
    PendingRun,
    StoredSession,
    pending_signed,
    sign_pending,
)
from praxo_actors.memory._log_write import Delete, HeadOf, Row, plan
from praxo_actors.memory._runs import indexed_session

__all__ = [
    "HEADS",
    "INBOX",
    "JOURNAL",
    "MAX_ENTRIES",
    "MAX_RECORDS",
    "PENDING",
    "RECORDS",
    "RESULTS",
    "RESULTS_KEPT",
    "SNAPSHOTS",
    "Accept",
    "AcceptedRun",
    "Commit",
    "JournalAppend",
    "PendingRun",
    "SessionLog",
    "StoredSession",
    "pending_signed",
    "sign_pending",
]

_decode = msgspec.json.decode

HEADS_KEPT = 65_536
"""How many sessions' heads a log's writer keeps in memory at most (~150 bytes each)."""

EQUAL_HEADS_KEPT = 4096
"""How many distinct heads a log's writer shares among the sessions whose heads are equal."""


class SessionLog:
    """The session log over a memory store's documents (see the module docstring).

    A store may implement the same methods natively (a server-side compare-and-set); this one
    checks versions and writes under the store's lock, which makes it exact for every writer in
    this process (another process is kept out by the runtime's file lease).
    """

    def __init__(self, store: Any, keep_heads: bool = False) -> None:
        self.store = store
        self._lock = getattr(store, "_lock", None)
        # Decided once: whether the store's own hooks may be used (our keys and namespaces are
        # checked by construction, so the public API's validation walk is skipped).
        own = isinstance(store, StoreBase)
        self._own_reads = own and type(store).get_many is StoreBase.get_many
        self._own_apply = own and type(store).apply is StoreBase.apply
        # The heads this log wrote, so that a commit does not read its session's head back.
        # Only for the one writer of a store no other process writes (``keep_heads``: the
        # runtime's store actor, which holds the store's lease) and only where every change
        # goes through this object's lock: not on a store shared by hosts (a database's
        # ``session_transaction``), whose version check stays in the database. Any change made
        # by another writer in this process (counted by the store) empties it.
        shared = getattr(store, "session_transaction", None) is not None
        keep = keep_heads and self._own_apply and not shared
        self._heads: dict[str, HeadOf] | None = {} if keep else None
        # One object for the heads that are equal (most sessions' are: a few runs, one
        # agent): a kept head then costs its session a table slot, not a 72-byte tuple.
        self._equal: dict[HeadOf, HeadOf] = {}
        self._seen = -1  # the store's count of changes after this log's last write

    # -- reading ------------------------------------------------------------------------------

    def _get_texts(self, namespace: tuple[str, ...], keys: list[str]) -> list[str | None]:
        """The rows' text (None: no row), as stored: nothing is decoded."""
        if not keys:
            return []
        store = self.store
        if self._own_reads:
            with store._lock:
                store._check_open()
                texts: list[str | None] = store._read_texts(namespace, keys)
            return texts
        get_many = getattr(store, "get_many", None)
        if get_many is not None:
            items = get_many(namespace, keys)
        else:
            items = [store.get(namespace, k) for k in keys]
        return [None if item is None else doc_text(item.value) for item in items]

    def _get_many(self, namespace: tuple[str, ...], keys: list[str]) -> list[dict[str, Any] | None]:
        if not keys:
            return []
        if self._own_reads:
            texts = self._get_texts(namespace, keys)
            return [
                None if text is None else decode_text(namespace, k, text)
                for k, text in zip(keys, texts, strict=True)
            ]
        get_many = getattr(self.store, "get_many", None)
        if get_many is not None:
            items = get_many(namespace, keys)
        else:
            items = [self.store.get(namespace, k) for k in keys]
        return [None if item is None else item.value for item in items]

    def load(self, session_ids: Sequence[str]) -> list[StoredSession | None]:
        """Return each session's stored state (None: nothing stored), in a few batched reads.

        On a shared database the reads run in one snapshot of it (``read_snapshot``), so a
        commit of another host is seen whole or not at all.
        """
        ids = list(session_ids)
        snapshot = getattr(self.store, "read_snapshot", None)
        if snapshot is not None:
            loaded: list[StoredSession | None] = snapshot(lambda: self._load(ids))
            return loaded
        return self._load(ids)

    def _load(self, ids: list[str]) -> list[StoredSession | None]:
        snaps = self._get_many(SNAPSHOTS, ids)
        heads = [None if t is None else read_head(t) for t in self._get_texts(HEADS, ids)]
        pendings = [pending_of(doc) for doc in self._get_many(PENDING, ids)]
        inboxes = [read_inbox(doc) for doc in self._get_many(INBOX, ids)]
        record_keys: list[str] = []
        journal_keys: list[str] = []
        shapes: list[tuple[int, int, str | None]] = []
        for sid, snap, head, pending in zip(ids, snaps, heads, pendings, strict=True):
            base = version = _int(snap, "version") if snap is not None else 0
            if head is not None:
                version, base = head.version, head.base
            broken = head is not None and not head.ok
            why = "the head is broken" if broken else fault(base, version, pending)
            if why is None:
                record_keys.extend(key(sid, k) for k in range(base + 1, version + 1))
                if pending is not None:
                    journal_keys.extend(key(sid, i) for i in range(pending.entries))
            shapes.append((base, version, why))
        records = iter(self._get_texts(RECORDS, record_keys))
        journal = iter(self._get_many(JOURNAL, journal_keys))
        out: list[StoredSession | None] = []
        for snap, head, pending, shape, inbox in zip(
            snaps, heads, pendings, shapes, inboxes, strict=True
        ):
            base, version, why = shape
            recs: list[str] = []
            entries: list[str] = []
            if why is None:
                recs = [stored_text("record", next(records)) for _ in range(base, version)]
                count = pending.entries if pending else 0
                entries = [_text(next(journal), "entry") for _ in range(count)]
            if inbox is None:
                why, inbox = why or "the inbox is broken", []
            if snap is None and head is None and pending is None and not inbox and not why:
                out.append(None)
                continue
            document = snap.get("checkpoint") if snap is not None else None
            if snap is not None and not isinstance(document, str):
                document = ""  # a broken snapshot revives as invalid JSON, not as no snapshot
            out.append(
                StoredSession(
                    snapshot=document,
                    base=base,
                    records=recs,
                    version=version,
                    results=0 if head is None else head.results,
                    pending=pending,
                    journal=entries,
                    fault=why,
                    agent=None if head is None else head.agent,
                    inbox=inbox,
                )
            )
        return out

    def pending(self) -> list[tuple[str, PendingRun]]:
        """Return every session with a durable run in progress or accepted, and those runs:
        the runs in progress in session id order, then the accepted ones (each session's in
        its order)."""
        found: list[tuple[str, PendingRun]] = []
        for item in self._scan(PENDING):
            pending = pending_of(item.value)
            if pending is not None and pending.run_id:
                found.append((item.key, pending))
        for item in self._scan(INBOX):
            for run in read_inbox(item.value) or ():
                found.append((item.key, PendingRun(run.run_id, run.agent, run.input)))
        return found

    def _scan(self, namespace: tuple[str, ...]) -> list[Any]:
        search = getattr(self.store, "search", None)
        if search is None:
            return []
        found: list[Any] = []
        while True:
            page = search(namespace, limit=1000, offset=len(found))
            found.extend(page)
            if len(page) < 1000:
                return found

    def results(self, session_id: str) -> list[str]:
        """Return the kept result documents of a session's last runs, oldest first."""
        texts = self._get_texts(HEADS, [session_id])
        head = None if texts[0] is None else read_head(texts[0])
        # The ring's next slot holds its oldest result once it has wrapped around.
        start = 0 if head is None else head.results % RESULTS_KEPT
        slots = [key(session_id, (start + j) % RESULTS_KEPT) for j in range(RESULTS_KEPT)]
        kept = (stored_text("result", t) for t in self._get_texts(RESULTS, slots) if t)
        return [text for text in kept if text]

    def find_run(self, run_id: str) -> str | None:
        """Return the id of the session that keeps run ``run_id``'s result, or holds it as a
        durable run accepted or in progress; None if the store knows no such run."""
        found = indexed_session(self._get_many, run_id)
        if found is not None:
            return found
        for session_id, run in self.pending():
            if run.run_id == run_id:
                return session_id
        return None

    # -- writing -------------------------------------------------------------------------------

    def write(self, commits: Sequence[Commit], appends: Sequence[JournalAppend]) -> list[bool]:
        """Apply journal appends and commits in one change; return, per commit, whether it applied.

        A versioned commit whose ``expected`` is not the log's version is skipped (False); the
        rest are written together (one transaction where the store has them).
        """
        return self.write_all(commits, appends)[0]

    def write_all(
        self,
        commits: Sequence[Commit],
        appends: Sequence[JournalAppend],
        accepts: Sequence[Accept] = (),
    ) -> tuple[list[bool], list[bool]]:
        """:meth:`write`, also returning per journal append whether it applied.

        The log holds one pending run per session. An append that goes on with a run (any but
        its first entry) applies only while that run is the one pending: after another host
        finished it, or a newer run took its place, it is skipped (False). A commit drops the
        pending run and its journal only when the run is its own, so a run that began in the
        same flush (its first entry gathered with the commit before it) keeps its journal.

        ``accepts`` add runs to inboxes; they are applied first (a run is accepted before its
        session sends anything else about it), and always apply.
        """
        transaction = getattr(self.store, "session_transaction", None)
        if transaction is not None:  # a shared database: the compare-and-set holds across hosts
            ids = [
                c.session_id
                for c in commits
                if c.record is not None or c.journal >= 0 or c.inbox is not None
            ]
            ids += [a.session_id for a in appends]
            ids += [a.session_id for a in accepts]
            done: tuple[list[bool], list[bool]] = transaction(
                ids, lambda: self._write(commits, appends, accepts)
            )
            return done
        if self._lock is None:
            return self._write(commits, appends, accepts)
        with self._lock:
            return self._write(commits, appends, accepts)

    def _write(
        self,
        commits: Sequence[Commit],
        appends: Sequence[JournalAppend],
        accepts: Sequence[Accept] = (),
    ) -> tuple[list[bool], list[bool]]:
        heads = self._heads
        if heads is None:
            rows, deletes, applied, appended = plan(
                self._get_texts, self._get_many, commits, appends, accepts
            )
            if rows or deletes:
                self._apply(rows, deletes)
            return applied, appended
        if self.store._changes != self._seen:
            heads.clear()  # another writer changed the store: its heads are read again
        written: dict[str, HeadOf] = {}
        rows, deletes, applied, appended = plan(
            self._get_texts, self._get_many, commits, appends, accepts, heads, written
        )
        self._seen = -1  # until the change below is made
        if rows or deletes:
            self._apply(rows, deletes)
        if len(heads) + len(written) > HEADS_KEPT:
            heads.clear()  # bounded: the sessions still running read their heads once more
        equal = self._equal
        if len(equal) + len(written) > EQUAL_HEADS_KEPT:
            equal.clear()  # bounded too; the heads kept stay as they are
        for sid, head in written.items():
            heads[sid] = equal.setdefault(head, head)
        self._seen = self.store._changes
        return applied, appended

    def _apply(self, rows: list[Row], deletes: list[Delete]) -> None:
        store = self.store
        if self._own_apply:
            # Our own rows (constant namespaces, checked ids, text built by the session or
            # here): written as they are, without the public API's validation walk.
            with store._lock:
                store._check_open()
                store._changes += 1
                store._apply(rows, deletes, store._clock())
            return
        puts = [(ns, k, _decode(text)) for ns, k, text in rows]
        apply = getattr(store, "apply", None)
        if apply is not None:
            apply(puts, deletes)
            return
        for namespace, k, value in puts:
            store.put(namespace, k, value)
        for namespace, k in deletes:
            store.delete(namespace, k)


def _int(doc: dict[str, Any] | None, name: str) -> int:
    value = None if doc is None else doc.get(name, 0)
    return value if type(value) is int and value >= 0 else 0


def _text(doc: dict[str, Any] | None, name: str) -> str:
    value = None if doc is None else doc.get(name)
    # A missing or broken document revives as invalid JSON: the session refuses to restore.
    return value if isinstance(value, str) else ""
