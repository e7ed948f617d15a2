"""One write of the session log: a batch of commits, journal appends and accepted runs turned
into the rows to store and to delete, with what applied.

What a commit carries is stored as it is (see :mod:`~praxo_actors.memory._log_rows`): a run's
record and result are its rows' text. Around them the write reads only what it must decide
on — each session's head (one batched read, of the heads its writer does not keep), its
pending run when a durable run is involved, its inbox when a run enters or leaves it — and
writes the new head from its ints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from sys import intern
from typing import Any

import msgspec

from praxo_actors.memory._inbox import INBOX, Accept, InboxChanges
from praxo_actors.memory._log_rows import doc_text, head_row, key, pending_of, read_head, row_text
from praxo_actors.memory._log_types import (
    HEADS,
    JOURNAL,
    PENDING,
    RECORDS,
    RESULTS,
    RESULTS_KEPT,
    SNAPSHOTS,
    Commit,
    JournalAppend,
)
from praxo_actors.memory._runs import index_rows

__all__ = ["Delete", "Row", "plan"]

Row = tuple[tuple[str, ...], str, str]  # namespace, key, the row's JSON text
Delete = tuple[tuple[str, ...], str]
HeadOf = tuple[int, int, int, str | None]  # version, base, results, agent
GetTexts = Callable[[tuple[str, ...], list[str]], list[str | None]]
GetDocs = Callable[[tuple[str, ...], list[str]], list[dict[str, Any] | None]]

_ENCODER = msgspec.json.Encoder(order="sorted")
_UNCHANGED = InboxChanges({})  # for a write that changes no inbox: it holds none to change


def _json(value: Any) -> str:
    return _ENCODER.encode(value).decode()


def plan(
    get_texts: GetTexts,
    get_docs: GetDocs,
    commits: Sequence[Commit],
    appends: Sequence[JournalAppend],
    accepts: Sequence[Accept],
    known: Mapping[str, HeadOf] | None = None,
    written: dict[str, HeadOf] | None = None,
) -> tuple[list[Row], list[Delete], list[bool], list[bool]]:
    """Return the rows to write, the rows to delete, and per commit and per journal append
    whether it applied (see :meth:`~praxo_actors.memory._log.SessionLog.write_all`).

    ``known`` holds heads as stored that need no read (the writer's own); ``written``, when
    given, receives the heads these rows write.
    """
    rows: list[Row] = []
    deletes: list[Delete] = []
    pending_runs = _pending_runs(get_docs, commits, appends)
    inboxes = _inboxes(get_docs, commits, appends, accepts)
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
            entry = f'{{"entry":{_json(append.entry)}}}'
            rows.append((JOURNAL, key(sid, pending.entries - 1), entry))
        rows.append((PENDING, sid, _json(pending)))
        if append.accepted:  # it began: from now on the pending run, not an accepted one
            inboxes.take(sid, pending.run_id)
        pending_runs[sid] = (pending.run_id, pending.entries)
        appended.append(True)
    heads = _heads(get_texts, get_docs, commits, known)
    applied: list[bool] = []
    touched: dict[str, None] = {}
    indexed: list[tuple[str, int, str | None]] = []  # results written: session, number, run
    for commit in commits:
        sid = commit.session_id
        if commit.inbox is not None:
            inboxes.take(sid, commit.inbox)
        version, base, results, agent = heads[sid]
        if commit.record is not None:
            if commit.expected != version:
                applied.append(False)
                continue
            version += 1
            if commit.snapshot is not None:
                snapshot = _json({"checkpoint": commit.snapshot, "version": version})
                rows.append((SNAPSHOTS, sid, snapshot))
                deletes.extend((RECORDS, key(sid, k)) for k in range(base + 1, version))
                base = version
            else:
                rows.append((RECORDS, key(sid, version), row_text("record", commit.record)))
        if commit.result is not None:
            slot = key(sid, results % RESULTS_KEPT)
            rows.append((RESULTS, slot, row_text("result", commit.result)))
            indexed.append((sid, results, commit.run_id or commit.kept or commit.ends))
            results += 1
        if commit.journal >= 0:
            _drop_journal(commit, pending_runs, deletes)
        named = commit.agent
        if named:
            # Interned: a head is kept per session, one agent's name is shared by many.
            agent = intern(named) if type(named) is str else named
        heads[sid] = (version, base, results, agent)
        touched[sid] = None
        applied.append(True)
    for sid in touched:
        rows.append((HEADS, sid, head_row(*heads[sid])))
        if written is not None:
            written[sid] = heads[sid]
    if indexed:
        index_puts, index_deletes = index_rows(get_texts, RESULTS, indexed, RESULTS_KEPT)
        rows.extend(index_puts)
        deletes.extend(index_deletes)
    if inboxes.changed:
        inbox_puts, inbox_deletes = inboxes.rows()
        rows.extend((ns, k, doc_text(doc)) for ns, k, doc in inbox_puts)
        deletes.extend(inbox_deletes)
    return rows, deletes, applied, appended


def _drop_journal(
    commit: Commit, pending_runs: dict[str, tuple[str, int] | None], deletes: list[Delete]
) -> None:
    """Drop the journal of the run a commit ends (and its pending entry, if it is its own)."""
    sid = commit.session_id
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
    deletes.extend((JOURNAL, key(sid, i)) for i in range(kept, entries))


def _heads(
    get_texts: GetTexts,
    get_docs: GetDocs,
    commits: Sequence[Commit],
    known: Mapping[str, HeadOf] | None,
) -> dict[str, HeadOf]:
    """Each committing session's head as stored: version, base, results, agent (``known``
    ones as given, the others read in one batched read)."""
    heads: dict[str, HeadOf] = {}
    ids: list[str] = []
    for commit in commits:
        sid = commit.session_id
        if sid in heads:
            continue
        kept = None if known is None else known.get(sid)
        if kept is None:
            ids.append(sid)
        else:
            heads[sid] = kept
    ids = list(dict.fromkeys(ids))
    if not ids:
        return heads
    headless: list[str] = []
    for sid, text in zip(ids, get_texts(HEADS, ids), strict=True):
        if text is None:
            headless.append(sid)  # new, or written by 0.1: at its snapshot's version
        else:
            head = read_head(text)
            agent = None if head.agent is None else intern(head.agent)
            heads[sid] = (head.version, head.base, head.results, agent)
    for sid, snap in zip(headless, get_docs(SNAPSHOTS, headless), strict=True):
        value = None if snap is None else snap.get("version", 0)
        base = value if type(value) is int and value >= 0 else 0
        heads[sid] = (base, base, 0, None)
    return heads


def _inboxes(
    get_docs: GetDocs,
    commits: Sequence[Commit],
    appends: Sequence[JournalAppend],
    accepts: Sequence[Accept],
) -> InboxChanges:
    """The inboxes of the sessions these writes change, as stored."""
    ids = [a.session_id for a in accepts]
    ids += [a.session_id for a in appends if a.accepted]
    ids += [c.session_id for c in commits if c.inbox is not None]
    if not ids:
        return _UNCHANGED
    ids = list(dict.fromkeys(ids))
    return InboxChanges(dict(zip(ids, get_docs(INBOX, ids), strict=True)))


def _pending_runs(
    get_docs: GetDocs, commits: Sequence[Commit], appends: Sequence[JournalAppend]
) -> dict[str, tuple[str, int] | None]:
    """The run pending per session these writes touch (its id and entries), as stored."""
    ids = [a.session_id for a in appends] + [c.session_id for c in commits if c.journal >= 0]
    if not ids:
        return {}  # runs that were not durable: no pending run to read
    ids = list(dict.fromkeys(ids))
    out: dict[str, tuple[str, int] | None] = {}
    for sid, doc in zip(ids, get_docs(PENDING, ids), strict=True):
        pending = pending_of(doc)
        out[sid] = None if pending is None else (pending.run_id, pending.entries)
    return out
