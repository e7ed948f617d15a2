"""The kernel: the one owner of routing, on the runtime's event loop thread.

It decides which actor hosts a session, admits runs (``SESSION_BUSY``, ``SESSION_OVERLOADED``,
``RUNTIME_SESSION_LIMIT``), keeps the pending runs and the counters, evicts the least recently
used idle session, passivates idle ones, and settles every run exactly once. It holds the refs
of the store actor, the event bus and the sessions supervisor: their start functions hand a
(re)started child's ref over by a post to the loop (:meth:`Kernel.child_started`), so nothing
is written here from another thread. Every method runs on the loop thread, so no lock guards
this state; other threads and modules reach it through :meth:`Kernel.post`, :meth:`Kernel.call`
(the loop's :class:`~praxo_actors.actors.LoopGate`) or :meth:`Kernel.ask_store`.

Its parts, each owning its own state: the :class:`SessionTable` (live sessions, LRU), the
:class:`RunBook` (pending runs and their futures), the :class:`Resumption` of interrupted and
journaled runs, the :class:`StoppedVersions` of the rollback check, the :class:`Activator`
(sessions started and restored in batches) and the :class:`ResumeFinder`.

A warm run is three actor messages: the kernel tells the session ``StartRun``; an ``async``
callback's outcome comes back to the session as ``EffectDone``; the session tells the store
``CommitRun`` itself (having handed its result to the kernel, :meth:`completed`). The store
writes what it has gathered once its mailbox is empty and posts the settled run ids here once
per write (:meth:`saved`), which settles the futures.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pykka

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors._log import get_logger
from praxo_actors.actors import IOPool, LoopBridge, LoopScheduler
from praxo_actors.actors._checks import any_thread, loop_owned, set_owner
from praxo_actors.codes import AGENT_CANCELLED, RUNTIME_INVALID_INPUT, RUNTIME_STOPPED
from praxo_actors.models import RunResult
from praxo_actors.runtime._events._events import EventRouter
from praxo_actors.runtime._kernel._activation import Activator
from praxo_actors.runtime._kernel._admission import Admission
from praxo_actors.runtime._kernel._agents import Agents
from praxo_actors.runtime._kernel._clock import LoopClock
from praxo_actors.runtime._kernel._entries import KernelEntries
from praxo_actors.runtime._kernel._finder import ResumeFinder
from praxo_actors.runtime._kernel._host import SessionHost
from praxo_actors.runtime._kernel._lifecycle import Lifecycle
from praxo_actors.runtime._kernel._resumption import Resumption
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._kernel._runs import RunBook
from praxo_actors.runtime._kernel._sessions import KernelSessions
from praxo_actors.runtime._kernel._settlement import Settlement
from praxo_actors.runtime._kernel._statistics import Counters
from praxo_actors.runtime._kernel._table import SessionTable
from praxo_actors.runtime._kernel._versions import VERSIONS_KEPT, StoppedVersions
from praxo_actors.runtime._protocol import CancelRun, StartRun, encode

__all__ = ["Kernel", "Lookup"]

logger = get_logger("praxo_actors.runtime")

# How a resume finds the run it goes on with (on the loop): the id of the session's
# interrupted run, or None.
Lookup = Callable[["Kernel", str], Coroutine[Any, Any, str | None]]


@loop_owned
class Kernel(KernelEntries, KernelSessions):
    """Route runs to session actors and settle them; every method runs on the loop thread
    unless it says otherwise (see the module doc). Its entries from any thread and the refs
    of the tree are in :class:`KernelEntries`, its control of live sessions in
    :class:`KernelSessions`."""

    def __init__(
        self,
        *,
        loop: asyncio.AbstractEventLoop,
        loop_thread_id: int,
        store: Any,
        agents: Agents,
        bus: EventRouter,
        registry: Any,
        io_pool: IOPool,
        loop_scheduler: LoopScheduler,
        session_scheduler: Any,
        clock: LoopClock,
        lookup: Lookup,
        key: bytes | None,
        allowed_types: frozenset[str],
        max_live_sessions: int,
        max_queue: int,
        on_busy: str,
        timeout: float,
        versions_kept: int = VERSIONS_KEPT,
    ) -> None:
        self.store = store
        self.agents = agents
        self.bus = bus
        self.registry = registry
        self.clock = clock
        self.timeout = timeout
        self.stopping = False
        # The tree's children and the front, handed over later (see KernelEntries).
        self.store_ref = self.bus_ref = self.sessions_ref = self.sessions = None
        self.front = _no_front
        self.counters = Counters()
        self.table = SessionTable(registry, self.counters, clock.now)
        self.runs = RunBook(self.counters)
        self.versions = StoppedVersions(versions_kept)
        self.host = SessionHost(
            loop=loop,
            loop_thread_id=loop_thread_id,
            bridge=LoopBridge(loop),
            io_pool=io_pool,
            key=key,
            allowed_types=allowed_types,
            loop_scheduler=loop_scheduler,
            clock=clock,
            kernel=self,
        )
        self.resumption = Resumption(self)
        self.activator = Activator(self, session_scheduler, registry, timeout, clock)
        self.finder = ResumeFinder(self, lookup, timeout)
        self.admission = Admission(self, max_live_sessions, max_queue, on_busy)
        self.lifecycle = Lifecycle(self)
        self.settlement = Settlement(self)
        for part in self._parts():
            set_owner(part, loop_thread_id)

    def _parts(self) -> tuple[object, ...]:
        return (
            self,
            self.agents,
            self.table,
            self.runs,
            self.resumption,
            self.activator,
            self.finder,
            self.admission,
            self.lifecycle,
            self.settlement,
        )

    @any_thread
    def release(self) -> None:
        """Let any thread read the kernel from now on: its loop has stopped for good (the
        stopping thread settles what is left, a stopped runtime's statistics read it)."""
        for part in self._parts():
            set_owner(part, None)

    @any_thread
    def request_cancel(self, run_id: str) -> bool:
        """``RunFuture.cancel`` (any thread): cancel on the loop; False once it has stopped."""
        try:
            return self.call(self.cancel, run_id, timeout=self.timeout)
        except PraxoError:
            return False

    # -- runs ---------------------------------------------------------------------------------

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

        The warm path runs here, straight: a live session's entry is touched, the run is
        pending, its ``StartRun`` told. Refusals, activation and the runs held behind a resume
        are :class:`Admission`'s. With ``journal``, a durable agent's run is accepted into its
        session's inbox in the store, queued behind another run or not
        (:mod:`~praxo_actors.runtime._front._submit` waits for that).
        """
        runs = self.runs
        session_id, run_id = future.session_id, future.run_id
        live = self.table.live
        entry = live.get(session_id)
        if (
            entry is None
            or entry.runs
            or self.stopping
            or self.finder.held
            or run_id in runs.pending
        ):
            entry = self.admission.admit(future, agent, input, deadline_ns, resume, journal)
            if entry is None:
                return
        else:  # a live idle session: the most recently used now
            del live[session_id]
            live[session_id] = entry
            entry.last_active = self.clock.now()
        try:
            start = StartRun(run_id, agent, input, deadline_ns, resume, journal, parent, chain)
            message = encode(start)
        except (TypeError, ValueError, OverflowError) as exc:  # checked by the handle already
            runs.refuse(future, PraxoError(RUNTIME_INVALID_INPUT, f"run not sendable: {exc}"))
            return
        entry.add_run(run_id)
        entry.agent = agent or entry.agent  # "": the session runs it with the agent before it
        runs.pending[run_id] = future
        self.counters.runs_started += 1
        if resume is not None:  # the run goes on: its future from a resume of its journal is old
            self.resumption.futures.pop(run_id, None)
        if self.agents.is_durable(agent):
            runs.starts[run_id] = message
        ref = entry.ref
        if ref is None:
            assert entry.backlog is not None
            entry.backlog.append((run_id, message))
            return
        try:
            ref.tell(message)
        except pykka.ActorDeadError:
            self._session_gone(run_id)

    def resume(
        self,
        future: RunFuture,
        agent: str,
        deadline_ns: int | None,
        resume: str,
        timeout: float | None = None,
    ) -> None:
        """Admit a resume once the run it goes on with is found (see ResumeFinder)."""
        if self.stopping:
            self.runs.refuse(future, AgentError(RUNTIME_STOPPED, "the runtime is stopping"))
            return
        self.finder.find(future, agent, deadline_ns, resume, timeout)

    def refuse(self, future: RunFuture, error: PraxoError) -> None:
        """Fail a run that was never admitted (it counts as refused)."""
        self.runs.refuse(future, error)

    def expect_journal(self, run_id: str, stored: Callable[[], None]) -> None:
        """Call ``stored()`` when the store holds the submitted durable run in its session's
        inbox (or the run has ended)."""
        self.runs.journal_acks[run_id] = lambda _entries: stored()

    def forget_journal(self, run_id: str) -> None:
        """Drop the journal callback of a run that has ended."""
        self.runs.journal_acks.pop(run_id, None)

    def cancel(self, run_id: str, hard: bool = False) -> bool:
        """Cancel a run: at once while it waits for its session, else at its next step (or at
        once with ``hard``: the callback in flight is cancelled or its outcome discarded).

        Return False if the run is no longer pending (or its result is being stored).
        """
        run_id = self.finder.alias(run_id)
        future = self.runs.pending.get(run_id)
        if future is None:
            return self.finder.cancel(run_id)
        if run_id in self.runs.results:
            return False
        entry = self.table.get(future.session_id)
        if entry is None:
            return False
        if entry.ref is not None:
            self.send(entry.ref, run_id, encode(CancelRun(run_id, hard)))
        elif entry.backlog is not None:
            entry.backlog = [(rid, m) for rid, m in entry.backlog if rid != run_id]
            self.failed(run_id, AgentError(AGENT_CANCELLED, "cancelled", run_id))
        return True

    def send(self, ref: pykka.ActorRef[Any], run_id: str, message: bytes) -> None:
        """Tell a session a message about run ``run_id`` (a stopped one fails the run)."""
        try:
            ref.tell(message)
        except pykka.ActorDeadError:
            self._session_gone(run_id)

    def _session_gone(self, run_id: str) -> None:
        # The session stopped between routing and sending: the runtime stopped it, or it
        # crashed (its runs, this one among them, are then failed already: settling is once).
        code = "RUNTIME_STOPPED" if self.stopping else "SESSION_CRASHED"
        self.failed(run_id, AgentError(code, "the session stopped", run_id))

    def wake(self, session_id: str) -> bool:
        """Activate a session with no run of its own (it resumes a journaled run, if any)."""
        if self.stopping:
            return False
        if session_id in self.table:
            return True
        if len(self.table) >= self.admission.max_live_sessions and not self.table.evict():
            return False
        self.activator.activate(session_id, self.table.add(session_id))
        return True

    # -- settling -------------------------------------------------------------------------------

    def failed(self, run_id: str, error: BaseException) -> None:
        """Fail a run's future with ``error`` (at most once per run)."""
        self.settlement.failed(run_id, error)

    def completed(self, run_id: str, result: RunResult) -> None:
        """Hold a completed run's result until the store acknowledges its commit.

        The session posts this before it tells the store the commit, so the store's reply
        (posted to the loop after it) finds the result, unless the session runs on another
        thread than the store (see ``RunBook.stored``).
        """
        runs = self.runs
        if run_id not in runs.pending:
            return
        if runs.stored and run_id in runs.stored:  # the store's reply came first
            runs.stored.discard(run_id)
            self._settle(run_id, result)
            return
        runs.results[run_id] = result

    def saved(
        self,
        runs: list[tuple[str | None, str | None]],
        journaled: list[tuple[str, str, int]],
        accepted: list[tuple[str, str | None]] | None = None,
    ) -> None:
        """Settle the runs whose commits a write of the store wrote: each written run whose
        result is here completes; the rest (refused, failed, result not here yet) and the
        journal acks are :class:`Settlement`'s."""
        results = self.runs.results
        for run_id, error in runs:
            if run_id is None:
                continue
            result = results.pop(run_id, None) if error is None else None
            if result is None:
                self.settlement.not_settled(run_id, error)
            else:
                self._settle(run_id, result)
        if journaled or accepted:
            self.settlement.acks(journaled, accepted)

    def _settle(self, run_id: str, result: RunResult) -> None:
        """Complete a pending run's future with its committed result."""
        runs = self.runs
        future = runs.pending.pop(run_id, None)
        if future is None:
            return
        if runs.starts:
            runs.starts.pop(run_id, None)
            runs.retries.pop(run_id, None)
        self.counters.runs_completed += 1
        entry = self.table.live.get(future.session_id)
        if entry is not None and entry.pop_run(run_id):
            entry.last_active = self.clock.now()
        if self.resumption.held:
            self.resumption.release(run_id, True)
        future.set(result)

    def count_events(self, n: int) -> None:
        """Count events emitted by runs."""
        self.counters.events += n

    def resumed(self, session_id: str, run_id: str) -> None:
        """A session resumes durable run ``run_id`` from its journal: give it a future."""
        self.resumption.resumed(session_id, run_id)

    def watch(
        self, session_id: str, run_id: str, found: Callable[[RunFuture | None], None]
    ) -> None:
        """Call ``found(future)`` with a run's future once its session resumes it."""
        self.resumption.watch(session_id, run_id, found)

    def known(self, run_id: str) -> RunFuture | None:
        """Return the future of a pending, resumed or recently refused run."""
        return (
            self.runs.pending.get(run_id)
            or self.resumption.futures.get(run_id)
            or (self.runs.refused.get(run_id))
        )

    def started_as(self, run_id: str, message: bytes) -> None:
        """Keep the start of a pending durable run whose agent its session named (see
        ``RunBook.starts``)."""
        if run_id in self.runs.pending:
            self.runs.starts[run_id] = message

    # -- stops ----------------------------------------------------------------------------------

    def stop_all(self) -> None:
        """Fail every run still pending (the runtime has stopped its tree)."""
        self.stopping = True
        self.finder.stop()
        for run_id in list(self.runs.pending):
            self.failed(run_id, AgentError(RUNTIME_STOPPED, "the runtime stopped", run_id))

    def close(self) -> None:
        """Fail what is pending and cancel the loop's timers and tasks of the kernel."""
        self.stop_all()
        self.activator.close()
        self.host.bridge.cancel_all()


def _no_front() -> None:
    return None
