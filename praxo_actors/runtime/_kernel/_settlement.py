"""Settling runs: each run's future is set exactly once, a completed run's by the store.

Owned by the kernel, on the loop thread. The kernel completes a written run's future itself
(:meth:`Kernel.saved`); failing a run, a commit refused with ``SESSION_CONFLICT`` (which
reloads the session) or failed, and the journal acks of a write are settled here.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import pykka

from praxo_actors._errors import PraxoError
from praxo_actors.actors._checks import loop_owned
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._kernel._runs import fail
from praxo_actors.runtime._protocol import Journaled, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["Settlement"]


@loop_owned
class Settlement:
    """Settle runs for the kernel (see the module doc)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel

    def take(self, run_id: str, completed: bool) -> RunFuture | None:
        """Remove a pending run from its session and release the resumes it held."""
        kernel = self.kernel
        future = kernel.runs.take(run_id, completed)
        if future is None:
            return None
        entry = kernel.table.get(future.session_id)
        if entry is not None and entry.pop_run(run_id):
            entry.last_active = kernel.clock.now()
        if kernel.resumption.held:
            kernel.resumption.release(run_id, completed)
        return future

    def failed(self, run_id: str, error: BaseException) -> None:
        """Fail a run's future with ``error`` (at most once per run)."""
        kernel = self.kernel
        kernel.runs.results.pop(run_id, None)
        kernel.runs.stored.discard(run_id)
        future = self.take(run_id, completed=False)
        if future is not None:
            fail(future, error)

    def not_settled(self, run_id: str, error: str | None) -> None:
        """A run a write of the store reported that the kernel could not complete there.

        Written, with its result not here yet: the result settles it on arrival. Refused with
        ``SESSION_CONFLICT`` (the session's log moved on under it: another writer): the
        session reloads from the store, and its runs still pending fail with that code too
        (they were built on the stale state). Failed: ``STORE_FAILED`` (or the write's code).
        """
        kernel = self.kernel
        result = kernel.runs.results.pop(run_id, None)
        if error is None and result is None and run_id in kernel.runs.pending:
            kernel.runs.stored.add(run_id)  # its result is on its way (see RunBook.stored)
            return
        future = kernel.runs.pending.get(run_id)
        self.failed(run_id, PraxoError(error or "STORE_FAILED", "the run was not committed"))
        if future is not None and error is not None:
            kernel.lifecycle.reload(future.session_id, error)

    def acks(
        self,
        journaled: list[tuple[str, str, int]],
        accepted: list[tuple[str, str | None]] | None,
    ) -> None:
        """Pass a write's journal acks on.

        A run ``accepted`` into its session's inbox lets its ``submit`` return; one the store
        failed to accept fails ``STORE_FAILED`` (and is cancelled in its session).
        """
        kernel = self.kernel
        acks = kernel.runs.journal_acks
        for run_id, code in accepted or ():
            ack = acks.pop(run_id, None)
            if code is not None and run_id in kernel.runs.pending:
                kernel.cancel(run_id, True)
                self.failed(run_id, PraxoError(code, "the run was not accepted by the store"))
            if ack is not None:
                ack(0 if code is None else -1)
        for session_id, run_id, entries in journaled:
            if acks:
                ack = acks.pop(run_id, None)
                if ack is not None:
                    ack(entries)
            entry = kernel.table.get(session_id)
            if entry is not None and entry.ref is not None:
                with contextlib.suppress(pykka.ActorDeadError):
                    entry.ref.tell(encode(Journaled(run_id, entries)))
