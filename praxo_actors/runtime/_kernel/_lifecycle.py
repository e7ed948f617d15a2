"""A session actor's life as the kernel sees it: activated, failed to activate, reloaded,
stopped or crashed; each settles the runs it leaves behind."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors._log import get_logger
from praxo_actors.actors._checks import loop_owned
from praxo_actors.codes import RUNTIME_STOPPED
from praxo_actors.memory._log import Commit, StoredSession
from praxo_actors.runtime._kernel._runs import own
from praxo_actors.runtime._kernel._table import Entry
from praxo_actors.runtime._protocol import CommitRun, Restore, StopRuns, encode
from praxo_actors.runtime._session._restore import result_document

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["Lifecycle"]

logger = get_logger("praxo_actors.runtime")

_RETRIES = 3  # times a durable run is sent again after crashes of its session


@loop_owned
class Lifecycle:
    """Owned by the kernel, on the loop thread: sessions coming up and going down."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        # Sessions stopped to reload after a refused commit: the code their pending runs get.
        self.reloads: dict[str, str] = {}

    def activated(
        self, session_id: str, entry: Entry, ref: pykka.ActorRef[Any], state: StoredSession | None
    ) -> None:
        """Give an activated session its stored log and the runs that waited for it."""
        kernel = self.kernel
        if kernel.table.get(session_id) is not entry:
            # Abandoned meanwhile (its runs failed, or the runtime is stopping).
            ref.stop(block=False)
            return
        entry.ref = ref
        kernel.counters.activations += 1
        backlog, entry.backlog = entry.backlog or [], None
        kernel.send(ref, "", encode(Restore(state, kernel.versions.get(session_id))))
        for run_id, message in backlog:
            kernel.send(ref, run_id, message)
        kernel.table.wake(entry, ref)

    def activation_failed(self, session_id: str, entry: Entry, error: PraxoError) -> None:
        """Fail every run that waited for a session that could not be activated."""
        kernel = self.kernel
        kernel.table.drop(session_id, entry)
        if kernel.stopping:
            error = AgentError(RUNTIME_STOPPED, "the runtime is stopping")
        entry.backlog = None
        for run_id in list(entry.runs):
            kernel.failed(run_id, own(error))
        kernel.table.wake(entry, None)

    def restore_failed(self, session_id: str, ref: pykka.ActorRef[Any], error: PraxoError) -> None:
        """A session found its checkpoint unusable: fail its runs with the checkpoint's code."""
        entry = self.kernel.table.get(session_id)
        if entry is not None and entry.ref is ref:
            self.activation_failed(session_id, entry, error)

    def reload(self, session_id: str, code: str) -> None:
        """Stop a session whose state in memory is not the store's: its next run restores it."""
        entry = self.kernel.table.get(session_id)
        if entry is None or entry.ref is None:
            return
        self.reloads[session_id] = code
        entry.ref.stop(block=False)

    def stop_runs(self, code: str, session_id: str | None = None) -> None:
        """Tell the live sessions with runs (or ``session_id`` alone) to end them with ``code``.

        Sent before the session's stop, which its mailbox then takes after it: each session
        cancels its ``async`` callback in flight (an agent tool's child run with it) and
        publishes its run's ``run.failed`` while the event bus is still up.
        """
        live = self.kernel.table.live
        if session_id is None:
            entries = list(live.values())
        else:
            entry = live.get(session_id)
            entries = [] if entry is None else [entry]
        message = encode(StopRuns(code))
        for entry in entries:
            if entry.ref is not None and entry.runs:
                # One stopped already has its runs settled as it went down.
                with contextlib.suppress(pykka.ActorDeadError):
                    entry.ref.tell(message)

    def _drop_accepted(self, session_id: str, run_ids: list[str], code: str) -> None:
        """Take runs that ended out of their session's inbox in the store (if they are there),
        and a journaled one's pending entry and journal (if it is the pending run), keeping
        their outcome for ``handle.result``: none of them runs later."""
        kernel = self.kernel
        ref = kernel.store_ref
        if ref is None:
            return
        for run_id in run_ids:
            error = AgentError(code, "the session stopped", run_id)
            kept = result_document(None, error, run_id, session_id, kernel.host.key)
            commit = Commit(session_id, result=kept, journal=0, inbox=run_id, ends=run_id)
            with contextlib.suppress(pykka.ActorDeadError):
                ref.tell(encode(CommitRun(commit)))

    def session_down(
        self, session_id: str, ref: pykka.ActorRef[Any], crashed: bool, version: int = 0
    ) -> None:
        """Settle every run a stopped actor leaves behind, and forget its entry."""
        kernel = self.kernel
        table = kernel.table
        by_user = session_id in table.user_stops
        reload_code = self.reloads.pop(session_id, None)
        if reload_code is None:  # a reload's actor held a state that is not the store's
            kernel.versions.stopped(session_id, version)
        entry = table.get(session_id)
        if entry is None or entry.ref is not ref:
            return
        table.user_stops.discard(session_id)
        table.drop(session_id, entry)
        if crashed:
            kernel.counters.crashes += 1
        # A run that completed before the stop is committed: the store settles it.
        left = [run_id for run_id in entry.runs if run_id not in kernel.runs.results]
        if kernel.stopping:
            code = "RUNTIME_STOPPED"
        elif reload_code is not None:
            code = reload_code
        elif by_user and not crashed:
            code = "AGENT_CANCELLED"
        else:  # it crashed, or its supervisor stopped it (a restart of the runtime's tree)
            code = "SESSION_CRASHED"
        starts, retries = kernel.runs.starts, kernel.runs.retries
        again = []
        if crashed and not kernel.stopping:
            # Durable runs go on: restored, the session resumes the journaled one, then the rest.
            again = [r for r in left if r in starts and retries.get(r, 0) < _RETRIES]
            left = [r for r in left if r not in again]
        if crashed:
            logger.warning(
                "session_crashed", session_id=session_id, runs_failed=len(left), resumed=len(again)
            )
        durable = [run_id for run_id in left if run_id in starts]
        for run_id in left:
            kernel.failed(run_id, AgentError(code, "the session stopped", run_id))
        if durable and code in ("AGENT_CANCELLED", "SESSION_CRASHED"):
            # Ended for good: a durable run accepted, or begun, must not run later. (After a
            # stop of the runtime it stays in the store; after a reload another writer has it.)
            self._drop_accepted(session_id, durable, code)
        if again:
            new = table.add(session_id)
            backlog: list[tuple[str, bytes]] = []
            for run_id in again:
                retries[run_id] = retries.get(run_id, 0) + 1
                new.add_run(run_id)
                backlog.append((run_id, starts[run_id]))
            new.backlog = backlog
            kernel.activator.activate(session_id, new)
