"""Admission: whether a run may start, and sending it to its session (activating it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from praxo_actors._errors import (
    AgentError,
    PraxoError,
    RuntimeLimitError,
    SessionBusyError,
    SessionOverloadedError,
)
from praxo_actors.actors._checks import loop_owned
from praxo_actors.codes import (
    RUNTIME_INVALID_INPUT,
    RUNTIME_SESSION_LIMIT,
    RUNTIME_STOPPED,
    SESSION_BUSY,
    SESSION_OVERLOADED,
)
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._kernel._table import Entry
from praxo_actors.runtime._protocol import CancelRun, StartRun, encode

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

    def submit(
        self,
        future: RunFuture,
        agent: str,
        input: str,
        deadline_ns: int | None,
        resume: str | None = None,
        journal: bool = False,
        parent: str | None = None,
        chain: tuple[str, ...] = (),
    ) -> None:
        """Admit a run and send it to its session (activating the session if need be).

        With ``journal``, a durable agent's run is accepted into its session's inbox in the
        store, queued behind another run or not (:mod:`~praxo_actors.runtime._front._submit`
        waits for that).
        """
        kernel = self.kernel
        runs, table = kernel.runs, kernel.table
        session_id, run_id = future.session_id, future.run_id
        if kernel.stopping:
            runs.refuse(future, AgentError(RUNTIME_STOPPED, "the runtime is stopping"))
            return
        if kernel.finder.holds(session_id):  # behind a resume whose run is being found
            kernel.finder.hold(future, agent, input, deadline_ns, resume, journal)
            return
        if run_id in runs.pending:  # a resume of a run that is not waiting for one (yet)
            kernel.resumption.pending_run(future, agent, input, deadline_ns, resume)
            return
        entry = table.get(session_id)
        if entry is None:
            if len(table) >= self.max_live_sessions and not table.evict():
                limit = f"{len(table)} live sessions, none idle to passivate"
                runs.refuse(future, RuntimeLimitError(RUNTIME_SESSION_LIMIT, limit))
                return
            entry = table.add(session_id)
            kernel.activator.activate(session_id, entry)
        else:
            if entry.runs and self.on_busy in ("interrupt", "rollback"):
                self._interrupt(entry)
            if self.on_busy == "reject" and entry.runs:
                busy = SessionBusyError(SESSION_BUSY, f"session {session_id!r} is running")
                runs.refuse(future, busy)
                return
            if len(entry.runs) > self.max_queue:
                many = f"session {session_id!r} has {len(entry.runs)} runs pending"
                runs.refuse(future, SessionOverloadedError(SESSION_OVERLOADED, many))
                return
            table.touch(session_id, entry)
        try:
            start = StartRun(run_id, agent, input, deadline_ns, resume, journal, parent, chain)
            message = encode(start)
        except (TypeError, ValueError, OverflowError) as exc:  # checked by the handle already
            runs.refuse(future, PraxoError(RUNTIME_INVALID_INPUT, f"run not sendable: {exc}"))
            return
        entry.add_run(run_id, future)
        entry.agent = agent or entry.agent  # "": the session runs it with the agent before it
        runs.admit(future)
        if resume is not None:  # the run goes on: its future from a resume of its journal is old
            kernel.resumption.futures.pop(run_id, None)
        if kernel.agents.is_durable(agent):
            runs.starts[run_id] = message
        if entry.ref is None:
            assert entry.backlog is not None
            entry.backlog.append((run_id, message))
        else:
            kernel.send(entry.ref, run_id, message)

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
