"""Admission: whether a run may start when the kernel's warm path does not take it.

The kernel admits a run to a live idle session itself (:meth:`Kernel.submit`); every other
case is decided here: refusals (``RUNTIME_STOPPED``, ``RUNTIME_SESSION_LIMIT``, ``SESSION_BUSY``,
``SESSION_OVERLOADED``), activation, runs held behind a resume, and the interruption of a busy
session's runs (``on_busy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praxo_actors._errors import (
    AgentError,
    RuntimeLimitError,
    SessionBusyError,
    SessionOverloadedError,
)
from praxo_actors.actors._checks import loop_owned
from praxo_actors.codes import (
    RUNTIME_SESSION_LIMIT,
    RUNTIME_STOPPED,
    SESSION_BUSY,
    SESSION_OVERLOADED,
)
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._kernel._table import Entry
from praxo_actors.runtime._protocol import CancelRun, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["Admission"]


@loop_owned
class Admission:
    """Owned by the kernel, on the loop thread: the limits a run is admitted under."""

    def __init__(
        self, kernel: Kernel, max_live_sessions: int, max_queue: int, on_busy: str
    ) -> None:
        self.kernel = kernel
        self.max_live_sessions = max_live_sessions
        self.max_queue = max_queue
        self.on_busy = on_busy

    def admit(
        self,
        future: RunFuture,
        agent: str,
        input: str,
        deadline_ns: int | None,
        resume: str | None,
        journal: bool,
    ) -> Entry | None:
        """Admit a run the kernel's warm path does not take; return its session's entry (the
        kernel sends it there), or None: the run is refused, or held, or goes on elsewhere.

        That is: a stopping runtime, a session whose runs wait for a resume being found, a run
        already pending (a resume), a session not live (activated here, within the limit of
        live sessions), or a busy one (``on_busy``, the limit of its queue).
        """
        kernel = self.kernel
        runs, table = kernel.runs, kernel.table
        session_id, run_id = future.session_id, future.run_id
        if kernel.stopping:
            runs.refuse(future, AgentError(RUNTIME_STOPPED, "the runtime is stopping"))
            return None
        if kernel.finder.holds(session_id):  # behind a resume whose run is being found
            kernel.finder.hold(future, agent, input, deadline_ns, resume, journal)
            return None
        if run_id in runs.pending:  # a resume of a run that is not waiting for one (yet)
            kernel.resumption.pending_run(future, agent, input, deadline_ns, resume)
            return None
        entry = table.get(session_id)
        if entry is None:
            if len(table) >= self.max_live_sessions and not table.evict():
                limit = f"{len(table)} live sessions, none idle to passivate"
                runs.refuse(future, RuntimeLimitError(RUNTIME_SESSION_LIMIT, limit))
                return None
            entry = table.add(session_id)
            kernel.activator.activate(session_id, entry)
            return entry
        if entry.runs and self.on_busy in ("interrupt", "rollback"):
            self._interrupt(entry)
        if self.on_busy == "reject" and entry.runs:
            busy = SessionBusyError(SESSION_BUSY, f"session {session_id!r} is running")
            runs.refuse(future, busy)
            return None
        if len(entry.runs) > self.max_queue:
            many = f"session {session_id!r} has {len(entry.runs)} runs pending"
            runs.refuse(future, SessionOverloadedError(SESSION_OVERLOADED, many))
            return None
        table.touch(session_id, entry)
        return entry

    def _interrupt(self, entry: Entry) -> None:
        """The newest input wins: what runs or waits stops at its next step boundary."""
        kernel = self.kernel
        keep = self.on_busy == "interrupt"
        for pending_id in list(entry.runs):
            if pending_id in kernel.runs.results:
                continue  # completed, its commit on the way
            cancel = encode(CancelRun(pending_id, False, keep))
            if entry.ref is not None:
                kernel.send(entry.ref, pending_id, cancel)
            elif entry.backlog is not None:
                entry.backlog.append((pending_id, cancel))
