"""A session's inbox in the session log: the durable runs accepted and not yet begun.

``praxo/inbox / s`` → ``{"runs": [...]}``, in the order the runs were accepted. ``submit``
adds a run (one write, gathered with the store's others); the run's first journal entry, which
makes it the session's pending run, or the commit of its end takes it out.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["INBOX", "Accept", "AcceptedRun", "InboxChanges", "read_inbox"]

INBOX = ("praxo", "inbox")

Put = tuple[tuple[str, ...], str, dict[str, Any]]
Delete = tuple[tuple[str, ...], str]


class AcceptedRun(msgspec.Struct, frozen=True):
    """A durable run accepted and not yet begun: what is needed to run it.

    ``deadline_unix_ns`` is its deadline in wall-clock nanoseconds (``time.time_ns``), the one
    clock that means the same in the next process.
    """

    run_id: str
    agent: str
    input: str
    deadline_unix_ns: int | None = None
    sig: str | None = None  # with a checkpoint key: signed over the session id and the rest


class Accept(msgspec.Struct, frozen=True):
    """Add ``run`` at the end of a session's inbox (a durable run accepted by ``submit``)."""

    session_id: str
    run: AcceptedRun


def read_inbox(doc: dict[str, Any] | None) -> list[AcceptedRun] | None:
    """The accepted runs an inbox document holds ([] for none; None: a broken document)."""
    if doc is None:
        return []
    try:
        return msgspec.convert(doc.get("runs"), list[AcceptedRun])
    except msgspec.ValidationError:
        return None


def _run_id(doc: Any) -> Any:
    return doc.get("run_id") if isinstance(doc, dict) else None


class InboxChanges:
    """The inboxes one write of the log changes: read once, changed in order, written back."""

    def __init__(self, docs: dict[str, dict[str, Any] | None]) -> None:
        self.runs: dict[str, list[Any]] = {}
        for sid, doc in docs.items():
            runs = None if doc is None else doc.get("runs")
            self.runs[sid] = list(runs) if isinstance(runs, list) else []
        self.changed: set[str] = set()

    def accept(self, accept: Accept) -> None:
        """Add an accepted run at the end of its session's inbox (once)."""
        runs = self.runs[accept.session_id]
        if not any(_run_id(doc) == accept.run.run_id for doc in runs):
            runs.append(msgspec.to_builtins(accept.run))
            self.changed.add(accept.session_id)

    def take(self, session_id: str, run_id: str) -> None:
        """Take run ``run_id`` out of the session's inbox (if it is there)."""
        runs = self.runs[session_id]
        kept = [doc for doc in runs if _run_id(doc) != run_id]
        if len(kept) != len(runs):
            self.runs[session_id] = kept
            self.changed.add(session_id)

    def rows(self) -> tuple[list[Put], list[Delete]]:
        """The documents to write and to delete for the inboxes changed."""
        puts: list[Put] = []
        deletes: list[Delete] = []
        for sid in sorted(self.changed):
            if self.runs[sid]:
                puts.append((INBOX, sid, {"runs": self.runs[sid]}))
            else:
                deletes.append((INBOX, sid))
        return puts, deletes
