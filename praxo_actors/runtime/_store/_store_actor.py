"""The memory store actor: the one writer of the session log.

All log writes and reads go through this actor's mailbox, and a read first writes what is
gathered, so a session being restored sees every commit sent before it (its earlier runs).

Where it runs depends on the store. A store whose calls block (SQLite's fsync, any store of
yours) gets a :class:`StoreActor`, a ``ThreadingActor``: its calls block only its own thread.
The in-memory store never blocks, so it gets a :class:`LoopStoreActor`, an M:N actor on the
runtime's event loop: a run on it then completes without leaving the loop thread.

Writes are group-committed: a :class:`CommitRun` (told by a session, directly),
:class:`JournalEffect` or :class:`AcceptRun` (a durable run accepted into its session's inbox)
is gathered, and the actor writes what it has gathered once its mailbox
is empty, in one change (with SQLite's ``synchronous=FULL``, one fsync of ~3 ms for a burst
instead of one per run); no message is needed to end a batch. After each write the actor posts
the settled run ids to the runtime's kernel on its loop, once: that reply settles the runs'
futures, and a durable run takes its next step only after the write that holds its journal
entry. Both kinds answer asks with an :class:`~praxo_actors.actors.MNFuture`, so the kernel
can take a reply as a callback instead of a waiting thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pykka

from praxo_actors._errors import PraxoError, ProtocolError
from praxo_actors._log import get_logger
from praxo_actors.actors import AwaitableThreadingActor, MNActor, inbox_empty
from praxo_actors.codes import PROTOCOL_INVALID_MESSAGE, STORE_FAILED
from praxo_actors.memory._log import Accept, Commit, JournalAppend, SessionLog
from praxo_actors.runtime._protocol import (
    AcceptRun,
    CommitRun,
    FindRun,
    FlushCheckpoints,
    JournalEffect,
    LoadPending,
    LoadResults,
    LoadSessions,
    Pending,
    Results,
    RunFound,
    Sessions,
    decode,
    encode,
)

__all__ = ["CHECKPOINT_NAMESPACE", "SKIPPED", "LoopStoreActor", "StoreActor"]

CHECKPOINT_NAMESPACE = ("praxo", "sessions")
"""The memory-store namespace that holds each session's snapshot (see the session log)."""

logger = get_logger("praxo_actors.runtime")

SKIPPED = -2
"""The entries a journal write reports when the log skipped it: its run is no longer pending."""

# (run id, error code or None) per commit; (session id, run id, entries) per journal write;
# and, when the write held some, (run id, error code or None) per run accepted into an inbox.
Saved = Callable[..., None]


class _StoreLogic:
    """The behaviour both store actors share (``on_receive``, flushes, failure hooks)."""

    actor_ref: pykka.ActorRef[Any]

    def __init__(self, store: Any, on_saved: Saved) -> None:
        super().__init__()
        self.store = store
        # The one writer of the store's log (the runtime holds its lease): it keeps its heads.
        self.log = SessionLog(store, keep_heads=True)
        self._on_saved = on_saved
        self._commits: list[Commit] = []
        self._appends: list[JournalAppend] = []
        self._accepts: list[Accept] = []
        self.saves = 0
        self.flushes = 0

    def on_receive(self, message: Any) -> Any:
        """Handle commits and journal writes (tell), flushes, and loads (ask)."""
        match decode(message):
            case CommitRun(commit=commit):
                self._commits.append(commit)
                self._flush_when_idle()
                return None
            case JournalEffect(append=append):
                self._appends.append(append)
                self._flush_when_idle()
                return None
            case AcceptRun(accept=accept):
                self._accepts.append(accept)
                self._flush_when_idle()
                return None
            case FlushCheckpoints():  # kept for senders of 0.2: the same as an empty inbox
                self._flush()
                return None
            case LoadSessions(session_ids=ids):
                self._flush()
                return encode(Sessions(self.log.load(ids)))
            case LoadPending():
                self._flush()
                pending = self.log.pending()
                return encode(Pending([sid for sid, _ in pending], [run for _, run in pending]))
            case LoadResults(session_id=sid):
                self._flush()
                return encode(Results(self.log.results(sid)))
            case FindRun(run_id=run_id):
                self._flush()
                return encode(RunFound(self.log.find_run(run_id)))
            case other:
                raise ProtocolError(
                    PROTOCOL_INVALID_MESSAGE, f"store actor got {type(other).__name__}"
                )

    def _flush_when_idle(self) -> None:
        # What waits in the mailbox joins this batch: a burst is one write, and a lone commit
        # is written at once (no message to itself, which cost one actor turn per batch).
        # A Pykka actor by its subclasses; annotated, not cast: cast is a call on every commit.
        actor: pykka.Actor = self  # type: ignore[assignment]
        if inbox_empty(actor):
            self._flush()

    def _flush(self) -> None:
        if not self._commits and not self._appends and not self._accepts:
            return
        commits, appends, accepts = self._commits, self._appends, self._accepts
        self._commits, self._appends, self._accepts = [], [], []
        error: str | None = None
        applied: list[bool] = []
        appended: list[bool] = []
        try:
            applied, appended = self.log.write_all(commits, appends, accepts)
            self.saves += len(commits)
            self.flushes += 1
        except PraxoError as exc:  # the store's own code (STORE_FAILED: its database failed)
            logger.error(
                "session_log_write_failed", commits=len(commits), code=exc.code, error=exc.message
            )
            error = exc.code
        except Exception as exc:  # a failing store must not take the runtime down
            logger.error("session_log_write_failed", commits=len(commits), error=repr(exc))
            error = "STORE_FAILED"
        self._report(commits, appends, applied, error, appended, accepts)

    def _report(
        self,
        commits: list[Commit],
        appends: list[JournalAppend],
        applied: list[bool],
        error: str | None,
        appended: list[bool] | None = None,
        accepts: list[Accept] | None = None,
    ) -> None:
        # Accepted runs only when there are: a flush of commits alone says what it always said.
        accepted = [(a.run.run_id, error) for a in accepts] if accepts else None
        more = () if accepted is None else (accepted,)
        if not appends and error is None and all(applied):
            # The common flush (runs' commits, all written): nothing to say per journal write.
            self._on_saved([(c.run_id, None) for c in commits], [], *more)
            return
        appended = [True] * len(appends) if appended is None else appended
        runs = [
            (c.run_id, error or (None if applied[i] else "SESSION_CONFLICT"))
            for i, c in enumerate(commits)
        ]
        # A journal write that failed reports -1 entries: the run fails STORE_FAILED; one
        # skipped because its run is no longer the one pending (another host took the session
        # over) reports SKIPPED: it fails SESSION_CONFLICT.
        journaled = [
            (
                a.session_id,
                a.pending.run_id,
                -1 if error is not None else a.pending.entries if appended[i] else SKIPPED,
            )
            for i, a in enumerate(appends)
        ]
        self._on_saved(runs, journaled, *more)

    def on_failure(self, *_exc_info: Any) -> None:
        """Fail the runs whose commits were gathered but not written (this actor crashed)."""
        commits, appends, accepts = self._commits, self._appends, self._accepts
        self._commits, self._appends, self._accepts = [], [], []
        if commits or appends or accepts:
            self._report(commits, appends, [], STORE_FAILED, None, accepts)

    def on_stop(self) -> None:
        """Write what is gathered (the runtime closes a store it opened, after the tree)."""
        self._flush()


class StoreActor(_StoreLogic, AwaitableThreadingActor):
    """Own a memory store whose calls may block, on a thread of its own.

    Args:
        store: A memory store (``SQLiteStore`` or one with the same API).
        on_saved: Called on this actor's thread after each flush with the run ids it held and
            an error code (None on success), and the journal writes it held; the runtime
            passes a post of its kernel's ``saved`` to the loop.
    """

    use_daemon_thread = True  # never keeps a process alive: the runtime stops at exit


class LoopStoreActor(_StoreLogic, MNActor):
    """Own a memory store whose calls never block (``InMemoryStore``), on the event loop."""

    actor_registered = False
