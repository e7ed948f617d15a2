"""The session log kept in a memory store: snapshots, run records, run journals and results.

Per session id ``s``, in the store's documents (namespace / key → value):

- ``praxo/heads / s`` → ``{"version": v, "base": b, "results": n, "agent": a}``: the log's
  position. ``v`` counts the committed runs; absent, the session is at its snapshot's version.
  ``a`` names the agent of the last run committed (absent before one names it).
- ``praxo/sessions / s`` → ``{"checkpoint": <snapshot>, "version": b}``: the session as of
  version ``b`` (a 0.1 checkpoint document, with no ``version``, is a snapshot at 0).
- ``praxo/records / s#k`` → ``{"record": <record>}`` for ``b < k <= v``: the messages run ``k``
  added. A commit writes one record and the head, so it costs what the run added, not what the
  session holds; a compaction writes a new snapshot and drops the records it covers.
- ``praxo/pending / s`` → the durable run in progress and ``praxo/journal / s#i`` its completed
  effects, dropped by the commit that ends the run.
- ``praxo/inbox / s`` → ``{"runs": [...]}``: the session's *inbox*, the durable runs accepted
  (``submit``) and not yet begun, in order. An accepted run is added by one write; its first
  journal entry (which makes it the pending run) or the commit that ends it takes it out.
- ``praxo/results / s#j`` → the last 100 runs' results, slot ``j = n mod 100``.
- ``praxo/runs / r`` → ``{"session": s, "n": n}``: which session keeps run ``r``'s result (see
  :mod:`~praxo_actors.memory._runs`).

Every change of one session — record, head, journal drop, result — is one :meth:`Store.apply`
(one transaction with SQLite), and commits are *versioned*: a commit names the version it was
built on and is refused with ``SESSION_CONFLICT`` when the log has moved on.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import Any, TypeVar

import msgspec

from praxo_actors.memory._base import StoreBase, decode_text
from praxo_actors.memory._inbox import INBOX, Accept, AcceptedRun, InboxChanges, read_inbox
from praxo_actors.memory._runs import index_rows, indexed_session

__all__ = [
    "INBOX",
    "MAX_ENTRIES",
    "MAX_RECORDS",
    "RESULTS_KEPT",
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

HEADS = ("praxo", "heads")
SNAPSHOTS = ("praxo", "sessions")
RECORDS = ("praxo", "records")
PENDING = ("praxo", "pending")
JOURNAL = ("praxo", "journal")
RESULTS = ("praxo", "results")

_ENCODER = msgspec.json.Encoder(order="sorted")
HEAD_FIELDS = ("version", "base", "results")

RESULTS_KEPT = 100
"""How many runs' results each session keeps for ``handle.result``."""

MAX_RECORDS = 1000
"""Records a log keeps after its snapshot at most: the commit that would reach it writes a
snapshot instead. A head claiming more is broken (and reading them all would not end)."""

MAX_ENTRIES = 100_000
"""Journal entries one run may hold; a pending run claiming more is broken."""


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


def _key(session_id: str, n: int) -> str:
    # Unambiguous: ``n`` is all digits, so the last "#" ends the session id.
    return f"{session_id}#{n}"


class SessionLog:
    """The session log over a memory store's documents (see the module docstring).

    A store may implement the same methods natively (a server-side compare-and-set); this one
    checks versions and writes under the store's lock, which makes it exact for every writer in
    this process (another process is kept out by the runtime's file lease).
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self._lock = getattr(store, "_lock", None)
        # Decided once: whether the store's own hooks may be used (our keys and namespaces are
        # checked by construction, so the public API's validation walk is skipped).
        own = isinstance(store, StoreBase)
        self._own_reads = own and type(store).get_many is StoreBase.get_many
        self._own_apply = own and type(store).apply is StoreBase.apply

    # -- reading ------------------------------------------------------------------------------

    def _get_many(self, namespace: tuple[str, ...], keys: list[str]) -> list[dict[str, Any] | None]:
        if not keys:
            return []
        store = self.store
        if self._own_reads:
            with store._lock:
                store._check_open()
                texts = store._read_texts(namespace, keys)
            return [
                None if text is None else decode_text(namespace, key, text)
                for key, text in zip(keys, texts, strict=True)
            ]
        get_many = getattr(self.store, "get_many", None)
        if get_many is not None:
            items = get_many(namespace, keys)
        else:
            items = [self.store.get(namespace, key) for key in keys]
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
        heads = self._get_many(HEADS, ids)
        pendings = self._get_many(PENDING, ids)
        inboxes = [read_inbox(doc) for doc in self._get_many(INBOX, ids)]
        record_keys: list[str] = []
        journal_keys: list[str] = []
        shapes: list[tuple[int, int, int, PendingRun | None, str | None]] = []
        for sid, snap, head, pending_doc in zip(ids, snaps, heads, pendings, strict=True):
            base = _int(snap, "version") if snap is not None else 0
            version = _int(head, "version") if head is not None else base
            base = _int(head, "base") if head is not None else base
            results = _int(head, "results") if head is not None else 0
            pending = _pending(pending_doc)
            fault = _fault(base, version, pending) if _head_ok(head) else "the head is broken"
            if fault is None:
                record_keys.extend(_key(sid, k) for k in range(base + 1, version + 1))
                if pending is not None:
                    journal_keys.extend(_key(sid, i) for i in range(pending.entries))
            shapes.append((base, version, results, pending, fault))
        records = iter(self._get_many(RECORDS, record_keys))
        journal = iter(self._get_many(JOURNAL, journal_keys))
        out: list[StoredSession | None] = []
        for snap, head, shape, inbox in zip(snaps, heads, shapes, inboxes, strict=True):
            base, version, results, pending, fault = shape
            recs, entries = [], []
            if fault is None:
                recs = [_text(next(records), "record") for _ in range(base + 1, version + 1)]
                entries = [
                    _text(next(journal), "entry") for _ in range(pending.entries if pending else 0)
                ]
            if inbox is None:
                fault, inbox = fault or "the inbox is broken", []
            if snap is None and head is None and pending is None and not inbox and not fault:
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
                    results=results,
                    pending=pending,
                    journal=entries,
                    fault=fault,
                    agent=_agent(head),
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
            pending = _pending(item.value)
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

    def results(self, session_id: str) -> list[dict[str, Any]]:
        """Return the kept results of a session's last runs, oldest first."""
        head = self._get_many(HEADS, [session_id])[0]
        # The ring's next slot holds its oldest result once it has wrapped around.
        start = _int(head, "results") % RESULTS_KEPT
        slots = [_key(session_id, (start + j) % RESULTS_KEPT) for j in range(RESULTS_KEPT)]
        return [value for value in self._get_many(RESULTS, slots) if value is not None]

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

    def _inboxes(
        self, commits: Sequence[Commit], appends: Sequence[JournalAppend], accepts: Sequence[Accept]
    ) -> InboxChanges:
        """The inboxes of the sessions these writes change, as stored."""
        ids = [a.session_id for a in accepts]
        ids += [a.session_id for a in appends if a.accepted]
        ids += [c.session_id for c in commits if c.inbox is not None]
        ids = list(dict.fromkeys(ids))
        return InboxChanges(dict(zip(ids, self._get_many(INBOX, ids), strict=True)))

    def _pending_runs(
        self, commits: Sequence[Commit], appends: Sequence[JournalAppend]
    ) -> dict[str, tuple[str, int] | None]:
        """The run pending per session these writes touch (its id and entries), as stored."""
        if not appends and all(c.journal < 0 for c in commits):
            return {}  # runs that were not durable: no pending run to read
        ids = list(
            dict.fromkeys(
                [a.session_id for a in appends] + [c.session_id for c in commits if c.journal >= 0]
            )
        )
        out: dict[str, tuple[str, int] | None] = {}
        for sid, doc in zip(ids, self._get_many(PENDING, ids), strict=True):
            pending = _pending(doc)
            out[sid] = None if pending is None else (pending.run_id, pending.entries)
        return out

    def _write(
        self,
        commits: Sequence[Commit],
        appends: Sequence[JournalAppend],
        accepts: Sequence[Accept] = (),
    ) -> tuple[list[bool], list[bool]]:
        puts: list[tuple[tuple[str, ...], str, dict[str, Any]]] = []
        deletes: list[tuple[tuple[str, ...], str]] = []
        pending_runs = self._pending_runs(commits, appends)
        inboxes = self._inboxes(commits, appends, accepts)
        for accept in accepts:
            inboxes.accept(accept)
        appended: list[bool] = []
        for append in appends:
            sid, pending = append.session_id, append.pending
            # A run's first write: its first entry, or (submitted) its record before any entry.
            first = pending.resumes == 0 and (
                (pending.entries == 1 and append.entry is not None)
                or (pending.entries == 0 and append.entry is None)
            )
            now = pending_runs.get(sid)
            if not first and (now is None or now[0] != pending.run_id):
                appended.append(False)  # the run is no longer the session's pending one
                continue
            if append.entry is not None:
                puts.append((JOURNAL, _key(sid, pending.entries - 1), {"entry": append.entry}))
            puts.append((PENDING, sid, msgspec.to_builtins(pending)))
            if append.accepted:  # it began: from now on the pending run, not an accepted one
                inboxes.take(sid, pending.run_id)
            pending_runs[sid] = (pending.run_id, pending.entries)
            appended.append(True)
        ids = list(dict.fromkeys([c.session_id for c in commits]))
        heads: dict[str, list[int]] = {}
        agents: dict[str, str] = {}
        if ids:
            headless: list[str] = []
            for sid, head in zip(ids, self._get_many(HEADS, ids), strict=True):
                if head is None:
                    headless.append(sid)  # new, or written by 0.1: at its snapshot's version
                else:
                    heads[sid] = [_int(head, name) for name in HEAD_FIELDS]
                    agent = _agent(head)
                    if agent:
                        agents[sid] = agent
            if headless:
                for sid, snap in zip(headless, self._get_many(SNAPSHOTS, headless), strict=True):
                    base = _int(snap, "version") if snap is not None else 0
                    heads[sid] = [base, base, 0]
        applied: list[bool] = []
        touched: set[str] = set()
        indexed: list[tuple[str, int, str | None]] = []  # results written: session, number, run
        for commit in commits:
            sid = commit.session_id
            if commit.inbox is not None:
                inboxes.take(sid, commit.inbox)
            state = heads[sid]
            version, base, results = state
            if commit.record is not None:
                if commit.expected != version:
                    applied.append(False)
                    continue
                version += 1
                if commit.snapshot is not None:
                    puts.append(
                        (SNAPSHOTS, sid, {"checkpoint": commit.snapshot, "version": version})
                    )
                    deletes.extend((RECORDS, _key(sid, k)) for k in range(base + 1, version))
                    base = version
                else:
                    puts.append((RECORDS, _key(sid, version), {"record": commit.record}))
            if commit.result is not None:
                puts.append((RESULTS, _key(sid, results % RESULTS_KEPT), {"result": commit.result}))
                indexed.append((sid, results, commit.run_id or commit.kept or commit.ends))
                results += 1
            if commit.journal >= 0:
                now = pending_runs.get(sid)
                kept = 0  # journal entries of a newer pending run, at the same keys
                entries = commit.journal
                if now is None or now[0] in ("", commit.run_id, commit.ends):  # "": broken
                    deletes.append((PENDING, sid))
                    pending_runs[sid] = None
                    if now is not None:  # an entry written after the run's last ack too
                        entries = max(entries, now[1])
                else:
                    kept = now[1]
                deletes.extend((JOURNAL, _key(sid, i)) for i in range(kept, entries))
            heads[sid] = [version, base, results]
            if commit.agent:
                agents[sid] = commit.agent
            touched.add(sid)
            applied.append(True)
        for sid in touched:
            version, base, results = heads[sid]
            doc: dict[str, Any] = {"version": version, "base": base, "results": results}
            if sid in agents:
                doc["agent"] = agents[sid]
            puts.append((HEADS, sid, doc))
        if indexed:
            index_puts, index_deletes = index_rows(self._get_many, RESULTS, indexed, RESULTS_KEPT)
            puts.extend(index_puts)
            deletes.extend(index_deletes)
        if inboxes.changed:
            inbox_puts, inbox_deletes = inboxes.rows()
            puts.extend(inbox_puts)
            deletes.extend(inbox_deletes)
        if puts or deletes:
            store = self.store
            apply = getattr(store, "apply", None)
            if self._own_apply:
                # Our own documents (constant namespaces, checked ids, JSON built here): written
                # without the public API's validation walk, a fifth of a commit's cost.
                rows = [(ns, key, _text_of(ns, value)) for ns, key, value in puts]
                with store._lock:
                    store._check_open()
                    store._apply(rows, deletes, store._clock())
            elif apply is not None:
                apply(puts, deletes)
            else:
                for namespace, key, value in puts:
                    self.store.put(namespace, key, value)
                for namespace, key in deletes:
                    self.store.delete(namespace, key)
        return applied, appended


def _text_of(namespace: tuple[str, ...], value: dict[str, Any]) -> str:
    """Return the canonical JSON text of one of the log's documents."""
    if namespace is HEADS:
        # Three ints (and a name), keys in sorted order: the text the encoder would write,
        # without its walk.
        base, results, version = value["base"], value["results"], value["version"]
        agent = value.get("agent")
        named = "" if agent is None else f'"agent":{_ENCODER.encode(agent).decode()},'
        return f'{{{named}"base":{base},"results":{results},"version":{version}}}'
    if len(value) == 1:
        # {"record": r}, {"result": r}, {"entry": e}: the text is JSON already; only the
        # string's own encoding is needed, not a walk of a dict (a third of the encode's cost).
        ((name, text),) = value.items()
        if type(text) is str:
            return f'{{"{name}":{_ENCODER.encode(text).decode()}}}'
    return _ENCODER.encode(value).decode()


def _fault(base: int, version: int, pending: PendingRun | None) -> str | None:
    """Why a head (or pending run) cannot describe a real log; None if it can."""
    if version < base:
        return f"the head is at version {version}, before its snapshot at {base}"
    if version - base > MAX_RECORDS:
        return f"the head claims {version - base} records after the snapshot"
    if pending is not None and pending.entries > MAX_ENTRIES:
        return f"the pending run claims {pending.entries} journal entries"
    return None


def _agent(head: dict[str, Any] | None) -> str | None:
    agent = None if head is None else head.get("agent")
    return agent if isinstance(agent, str) and agent else None


def _head_ok(head: dict[str, Any] | None) -> bool:
    if head is None:
        return True
    return all(type(head.get(name)) is int and head[name] >= 0 for name in HEAD_FIELDS)


def _int(doc: dict[str, Any] | None, name: str) -> int:
    value = None if doc is None else doc.get(name, 0)
    return value if type(value) is int and value >= 0 else 0


def _text(doc: dict[str, Any] | None, name: str) -> str:
    value = None if doc is None else doc.get(name)
    # A missing or broken document revives as invalid JSON: the session refuses to restore.
    return value if isinstance(value, str) else ""


def _pending(doc: dict[str, Any] | None) -> PendingRun | None:
    if doc is None:
        return None
    try:
        return msgspec.convert(doc, PendingRun)
    except msgspec.ValidationError:
        return PendingRun(run_id="", agent="", input="", entries=0)
