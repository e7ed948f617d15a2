"""The router: the one owner of routing, on the runtime's event loop thread.

It decides which actor hosts a session, admits runs (``SESSION_BUSY``, ``SESSION_OVERLOADED``,
``RUNTIME_SESSION_LIMIT``), keeps the pending runs and the counters, evicts the least recently
used idle session, passivates idle ones, and settles every run exactly once. Every method runs on
the loop thread, so no lock guards this state: callers elsewhere reach it with
``call_soon_threadsafe`` (see :class:`~praxo_actors.runtime._kernel._host.SessionHost`).

A new session is *activating* until its actor has started and its checkpoint has been read; both
happen for many sessions at once (:mod:`~praxo_actors.runtime._kernel._activation`). Runs
routed to it
meanwhile wait in its backlog and are sent, in order, right after its :class:`Restore`.
"""

from __future__ import annotations

import contextlib
import copy
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import pykka

from praxo_actors._errors import (
    AgentError,
    PraxoError,
    RuntimeLimitError,
    SessionBusyError,
    SessionOverloadedError,
)
from praxo_actors._log import get_logger
from praxo_actors.memory._log import StoredSession
from praxo_actors.models import RunResult
from praxo_actors.runtime._kernel._router_durable import Held, Resumption
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._kernel._versions import VERSIONS_KEPT, StoppedVersions
from praxo_actors.runtime._protocol import CancelRun, Journaled, Restore, StartRun, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._events._events import EventRouter
    from praxo_actors.runtime._kernel._activation import Activator
    from praxo_actors.runtime._kernel._agents import Agents
    from praxo_actors.runtime._kernel._finder import ResumeFinder

__all__ = ["Router", "RuntimeStatistics"]

logger = get_logger("praxo_actors.runtime")

Ready = Callable[[pykka.ActorRef[Any] | None], None]


class RuntimeStatistics(msgspec.Struct, frozen=True):
    """A snapshot of the runtime's counters; every count only grows except the gauges
    ``live_sessions``, ``runs_pending``, ``subscriptions`` and ``stopped_versions``."""

    live_sessions: int
    runs_started: int
    runs_completed: int
    runs_failed: int
    runs_pending: int
    activations: int
    passivations: int
    crashes: int
    events_emitted: int
    events_delivered: int
    events_dropped: int
    subscriptions: int
    runs_refused: int = 0
    """Runs refused at admission (``SESSION_BUSY``, ``SESSION_OVERLOADED``,
    ``RUNTIME_SESSION_LIMIT``, ``RUNTIME_STOPPED``): never started, so in no other count."""
    stopped_versions: int = 0
    """A gauge: stopped sessions whose log version is kept for the rollback check (at most
    ``versions_kept``); all the runtime keeps of a session once its actor has stopped."""


# How many refused runs ``handle.result`` still answers with their refusal (a few hundred bytes
# each: the future and its error).
REFUSED_KEPT = 1000


@dataclass(slots=True)
class _Entry:
    """One live or activating session: its actor (None while activating) and pending runs."""

    ref: pykka.ActorRef[Any] | None = None
    runs: dict[str, RunFuture] = field(default_factory=dict)
    last_active: float = 0.0
    # (run id, encoded StartRun) routed while activating; sent in order after the Restore.
    backlog: list[tuple[str, bytes]] | None = None
    waiters: list[Ready] | None = None


@dataclass(slots=True)
class _Counters:
    runs_refused: int = 0
    runs_started: int = 0
    runs_completed: int = 0
    runs_failed: int = 0
    activations: int = 0
    passivations: int = 0
    crashes: int = 0
    events: int = 0


def _own(error: PraxoError) -> PraxoError:
    """Return a copy of ``error`` for one future (same class, code, message and cause).

    One object raised into many futures would gain a traceback frame with each raise: a batch
    of 500 sessions failing at once left 500 frames on every future's error.
    """
    fresh = copy.copy(error)  # through PraxoError.__reduce__: a new object, no traceback
    fresh.__cause__ = error.__cause__
    return fresh


class Router(Resumption):
    """Route runs to session actors; every method runs on the loop thread (see module doc)."""

    def __init__(
        self,
        *,
        agents: Agents,
        bus: EventRouter,
        registry: Any,
        max_live_sessions: int,
        max_queue: int,
        on_busy: str,
        clock: Callable[[], float] = time.monotonic,
        versions_kept: int = VERSIONS_KEPT,
    ) -> None:
        self.agents = agents
        self.bus = bus
        self.registry = registry
        self.activator: Activator = None  # type: ignore[assignment]  # set by the runtime
        self.store_ref: pykka.ActorRef[Any] = None  # type: ignore[assignment]
        self.max_live_sessions = max_live_sessions
        self.max_queue = max_queue
        self.on_busy = on_busy
        self.clock = clock
        self.live: OrderedDict[str, _Entry] = OrderedDict()
        self.pending: dict[str, RunFuture] = {}
        # The last REFUSED_KEPT runs refused at admission: never started, so never in the
        # store, yet a submitted run's refusal is what ``handle.result(run_id)`` answers.
        self.refused: OrderedDict[str, RunFuture] = OrderedDict()
        # Completed runs whose checkpoint the store has not yet acknowledged. Kept here, not per
        # entry: the run is committed, so its outcome is the store's even if its session stops.
        self.results: dict[str, RunResult] = {}
        self.user_stops: set[str] = set()
        # Sessions stopped to reload after a refused commit: the code their pending runs get.
        self.reloads: dict[str, str] = {}
        # Encoded StartRun of each pending run of a durable agent: sent again if its session
        # crashes (a run already journaled resumes instead; the session ignores the repeat).
        self.starts: dict[str, bytes] = {}
        self.retries: dict[str, int] = {}
        # Callbacks waiting for a run that a session will resume (handle.result).
        self.watchers: dict[str, list[Callable[[RunFuture | None], None]]] = {}
        self.resumed_futures: dict[str, RunFuture] = {}
        self.held_resumes: dict[str, list[Held]] = {}
        # Callbacks waiting for a submitted durable run's first journal write (handle.submit).
        self.journal_acks: dict[str, Callable[[int], None]] = {}
        # The calling session of each child run an agent tool started (its events say so).
        self.parents: dict[str, str] = {}
        # The log version each session had when its actor stopped: restoring an older one is a
        # rollback of the store (CHECKPOINT_STALE). Kept for the last versions_kept sessions.
        self.versions = StoppedVersions(versions_kept)
        self.counters = _Counters()
        self.stopping = False
        self.finder: ResumeFinder = None  # type: ignore[assignment]  # set by the runtime

    # -- runs -------------------------------------------------------------------------------

    def submit(
        self,
        future: RunFuture,
        agent: str,
        input: str,
        deadline_ns: int | None,
        resume: str | None = None,
        journal: bool = False,
    ) -> None:
        """Admit a run and send it to its session (activating the session if need be).

        With ``journal``, a durable agent's run is written to the store before its first step
        (:mod:`~praxo_actors.runtime._front._submit` waits for that).
        """
        session_id, run_id = future.session_id, future.run_id
        if self.stopping:
            self._refuse(future, PraxoError("RUNTIME_STOPPED", "the runtime is stopping"))
            return
        if self.finder.holds(session_id):  # behind a resume whose run is being found
            self.finder.hold(future, agent, input, deadline_ns, resume)
            return
        if run_id in self.pending:  # a resume of a run that is not waiting for one (yet)
            self.resume_pending_run(future, agent, input, deadline_ns, resume)
            return
        entry = self.live.get(session_id)
        now = self.clock()
        if entry is None:
            if len(self.live) >= self.max_live_sessions and not self._evict():
                self._refuse(
                    future,
                    RuntimeLimitError(
                        "RUNTIME_SESSION_LIMIT",
                        f"{len(self.live)} live sessions, none idle to passivate",
                    ),
                )
                return
            entry = self.live[session_id] = _Entry(last_active=now, backlog=[])
            self.activator.activate(session_id, entry)
        else:
            if entry.runs and self.on_busy in ("interrupt", "rollback"):
                # The newest input wins: what runs or waits stops at its next step boundary.
                keep = self.on_busy == "interrupt"
                for pending_id in list(entry.runs):
                    if pending_id in self.results:
                        continue  # completed, its commit on the way
                    cancel = encode(CancelRun(pending_id, False, keep))
                    if entry.ref is not None:
                        self._send(entry.ref, pending_id, cancel)
                    elif entry.backlog is not None:
                        entry.backlog.append((pending_id, cancel))
            if self.on_busy == "reject" and entry.runs:
                busy = SessionBusyError("SESSION_BUSY", f"session {session_id!r} is running")
                self._refuse(future, busy)
                return
            if len(entry.runs) > self.max_queue:
                self._refuse(
                    future,
                    SessionOverloadedError(
                        "SESSION_OVERLOADED",
                        f"session {session_id!r} has {len(entry.runs)} runs pending",
                    ),
                )
                return
            self.live.move_to_end(session_id)
            entry.last_active = now
        try:
            message = encode(StartRun(run_id, agent, input, deadline_ns, resume, journal))
        except (TypeError, ValueError, OverflowError) as exc:  # checked by the handle already
            self._refuse(future, PraxoError("RUNTIME_INVALID_INPUT", f"run not sendable: {exc}"))
            return
        entry.runs[run_id] = future
        self.pending[run_id] = future
        self.counters.runs_started += 1
        if journal and len(entry.runs) > 1:
            # Queued behind another run: it is journaled when it starts (one pending per session).
            ack = self.journal_acks.pop(run_id, None)
            if ack is not None:
                ack(0)
        if self.agents.is_durable(agent):
            self.starts[run_id] = message
        if entry.ref is None:
            assert entry.backlog is not None
            entry.backlog.append((run_id, message))
        else:
            self._send(entry.ref, run_id, message)

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
            self._refuse(future, PraxoError("RUNTIME_STOPPED", "the runtime is stopping"))
            return
        self.finder.find(future, agent, deadline_ns, resume, timeout)

    def refuse(self, future: RunFuture, error: PraxoError) -> None:
        """Fail a run that was never admitted (it counts as refused)."""
        self._refuse(future, error)

    def _refuse(self, future: RunFuture, error: PraxoError) -> None:
        self.counters.runs_refused += 1
        _fail(future, error)
        self.refused[future.run_id] = future
        if len(self.refused) > REFUSED_KEPT:
            self.refused.popitem(last=False)

    def cancel(self, run_id: str, hard: bool = False) -> bool:
        """Cancel a run: at once while it waits for its session, else at its next step (or at
        once with ``hard``: the callback in flight is cancelled or its outcome discarded).

        Return False if the run is no longer pending (or its result is being stored).
        """
        run_id = self.finder.alias(run_id)
        future = self.pending.get(run_id)
        if future is None:
            return self.finder.cancel(run_id)
        if run_id in self.results:
            return False
        entry = self.live.get(future.session_id)
        if entry is None:
            return False
        if entry.ref is not None:
            self._send(entry.ref, run_id, encode(CancelRun(run_id, hard)))
        elif entry.backlog is not None:
            entry.backlog = [(rid, m) for rid, m in entry.backlog if rid != run_id]
            self.failed(run_id, AgentError("AGENT_CANCELLED", "cancelled", run_id))
        return True

    def _send(self, ref: pykka.ActorRef[Any], run_id: str, message: bytes) -> None:
        try:
            ref.tell(message)
        except pykka.ActorDeadError:
            # It stopped between routing and sending: the runtime stopped it, or it crashed
            # (its runs, this one among them, are then failed already: settling is once).
            code = "RUNTIME_STOPPED" if self.stopping else "SESSION_CRASHED"
            self.failed(run_id, AgentError(code, "the session stopped", run_id))

    # -- settling -----------------------------------------------------------------------

    def _take(self, run_id: str, completed: bool) -> RunFuture | None:
        future = self.pending.pop(run_id, None)
        if future is None:
            return None
        if self.starts:
            self.starts.pop(run_id, None)
            self.retries.pop(run_id, None)
        if completed:
            self.counters.runs_completed += 1
        else:
            self.counters.runs_failed += 1
        entry = self.live.get(future.session_id)
        if entry is not None and entry.runs.pop(run_id, None) is not None:
            entry.last_active = self.clock()
        if self.held_resumes:
            self.release_resumes(run_id, completed)
        return future

    def failed(self, run_id: str, error: BaseException) -> None:
        """Fail a run's future with ``error`` (at most once per run)."""
        self.results.pop(run_id, None)
        future = self._take(run_id, completed=False)
        if future is not None:
            _fail(future, error)

    def completed(self, run_id: str, result: RunResult, save: bytes) -> None:
        """Hold a completed run's result and send its commit (``save``) to the store.

        Both here, in this order, so that the store's acknowledgement always finds the result.
        """
        if run_id in self.pending:
            self.results[run_id] = result
        self.to_store(save, run_id)

    def to_store(self, message: bytes, run_id: str | None = None) -> None:
        """Send a commit or journal write to the store actor (a dead one fails the run)."""
        try:
            self.store_ref.tell(message)
        except pykka.ActorDeadError:
            if run_id is not None:
                self.saved([(run_id, "STORE_FAILED")], [])

    def saved(
        self, runs: list[tuple[str | None, str | None]], journaled: list[tuple[str, str, int]]
    ) -> None:
        """Settle the runs whose commits the store wrote (or refused), and pass journal acks on.

        A commit refused with ``SESSION_CONFLICT`` means the session's log moved on under it
        (another writer): the session reloads from the store, and its runs still pending fail
        with that code too (they were built on the stale state).
        """
        for run_id, error in runs:
            if run_id is None:
                continue
            result = self.results.pop(run_id, None)
            if error is not None or result is None:
                future = self.pending.get(run_id)
                self.failed(
                    run_id, PraxoError(error or "STORE_FAILED", "the run was not committed")
                )
                if future is not None and error is not None:
                    self._reload(future.session_id, error)
                continue
            future = self._take(run_id, completed=True)
            if future is not None:
                future.set(result)
        for session_id, run_id, entries in journaled:
            if self.journal_acks:
                ack = self.journal_acks.pop(run_id, None)
                if ack is not None:
                    ack(entries)
            entry = self.live.get(session_id)
            if entry is not None and entry.ref is not None:
                with contextlib.suppress(pykka.ActorDeadError):
                    entry.ref.tell(encode(Journaled(run_id, entries)))

    def _reload(self, session_id: str, code: str) -> None:
        """Stop a session whose state in memory is not the store's: its next run restores it."""
        entry = self.live.get(session_id)
        if entry is None or entry.ref is None:
            return
        self.reloads[session_id] = code
        entry.ref.stop(block=False)

    def count_events(self, n: int) -> None:
        """Count events emitted by runs."""
        self.counters.events += n

    # -- activation, passivation, stops -----------------------------------------------------

    def activated(
        self, session_id: str, entry: _Entry, ref: pykka.ActorRef[Any], state: StoredSession | None
    ) -> None:
        """Give an activated session its stored log and the runs that waited for it."""
        if self.live.get(session_id) is not entry:
            # Abandoned meanwhile (its runs failed, or the runtime is stopping).
            ref.stop(block=False)
            return
        entry.ref = ref
        self.counters.activations += 1
        backlog, entry.backlog = entry.backlog or [], None
        self._send(ref, "", encode(Restore(state, self.versions.get(session_id))))
        for run_id, message in backlog:
            self._send(ref, run_id, message)
        self._wake(entry, ref)

    def activation_failed(self, session_id: str, entry: _Entry, error: PraxoError) -> None:
        """Fail every run that waited for a session that could not be activated."""
        if self.live.get(session_id) is entry:
            del self.live[session_id]
        if self.stopping:
            error = PraxoError("RUNTIME_STOPPED", "the runtime is stopping")
        entry.backlog = None
        for run_id in list(entry.runs):
            self.failed(run_id, _own(error))
        self._wake(entry, None)

    def restore_failed(self, session_id: str, ref: pykka.ActorRef[Any], error: PraxoError) -> None:
        """A session found its checkpoint unusable: fail its runs with the checkpoint's code."""
        entry = self.live.get(session_id)
        if entry is not None and entry.ref is ref:
            self.activation_failed(session_id, entry, error)

    def when_ready(self, session_id: str, ready: Ready) -> None:
        """Call ``ready(ref)`` once the session is live (``ready(None)`` if it is not)."""
        entry = self.live.get(session_id)
        if entry is None or entry.ref is not None:
            ready(None if entry is None else entry.ref)
        elif entry.waiters is None:
            entry.waiters = [ready]
        else:
            entry.waiters.append(ready)

    def _wake(self, entry: _Entry, ref: pykka.ActorRef[Any] | None) -> None:
        waiters, entry.waiters = entry.waiters, None
        for ready in waiters or ():
            try:
                ready(ref)
            except Exception:
                logger.exception("session_waiter_failed")

    def passivate(self, session_id: str, idle_seconds: float = 0.0) -> pykka.ActorRef[Any] | None:
        """Stop a live session if it has no run and has been idle that long; return its ref."""
        entry = self.live.get(session_id)
        if entry is None or entry.ref is None or entry.runs:
            return None
        if self.clock() - entry.last_active < idle_seconds:
            return None
        ref = entry.ref
        del self.live[session_id]
        self.registry.unregister(session_id)
        self.counters.passivations += 1
        ref.stop(block=False)
        return ref

    def passivate_idle(self, idle_seconds: float) -> int:
        """Passivate every session idle for ``idle_seconds``; return how many."""
        now = self.clock()
        idle = [
            sid
            for sid, e in self.live.items()
            if e.ref is not None and not e.runs and now - e.last_active >= idle_seconds
        ]
        for session_id in idle:
            self.passivate(session_id)
        return len(idle)

    def _evict(self) -> bool:
        """Passivate the least recently used idle session; return whether there was one."""
        for session_id, entry in self.live.items():
            if not entry.runs and entry.ref is not None:
                self.passivate(session_id)
                return True
        return False

    def stop_session(self, session_id: str) -> pykka.ActorRef[Any] | None:
        """Stop a live session at a user's request; its pending runs fail ``AGENT_CANCELLED``."""
        entry = self.live.get(session_id)
        if entry is None or entry.ref is None:
            return None
        self.user_stops.add(session_id)
        entry.ref.stop(block=False)
        return entry.ref

    def session_down(
        self, session_id: str, ref: pykka.ActorRef[Any], crashed: bool, version: int = 0
    ) -> None:
        """Settle every run a stopped actor leaves behind, and forget its entry."""
        by_user = session_id in self.user_stops
        reload_code = self.reloads.pop(session_id, None)
        if reload_code is None:  # a reload's actor held a state that is not the store's
            self.versions.stopped(session_id, version)
        entry = self.live.get(session_id)
        if entry is None or entry.ref is not ref:
            return
        self.user_stops.discard(session_id)
        del self.live[session_id]
        if crashed:
            self.counters.crashes += 1
        # A run that completed before the stop is committed: the store settles it.
        left = [run_id for run_id in entry.runs if run_id not in self.results]
        if self.stopping:
            code = "RUNTIME_STOPPED"
        elif reload_code is not None:
            code = reload_code
        elif by_user and not crashed:
            code = "AGENT_CANCELLED"
        else:  # it crashed, or its supervisor stopped it (a restart of the runtime's tree)
            code = "SESSION_CRASHED"
        again = []
        if crashed and not self.stopping:
            # Durable runs go on: restored, the session resumes the journaled one, then the rest.
            again = [r for r in left if r in self.starts and self.retries.get(r, 0) < 3]
            left = [r for r in left if r not in again]
        if crashed:
            logger.warning(
                "session_crashed", session_id=session_id, runs_failed=len(left), resumed=len(again)
            )
        for run_id in left:
            self.failed(run_id, AgentError(code, "the session stopped", run_id))
        if again:
            new = self.live[session_id] = _Entry(last_active=self.clock(), backlog=[])
            for run_id in again:
                self.retries[run_id] = self.retries.get(run_id, 0) + 1
                new.runs[run_id] = entry.runs[run_id]
                new.backlog.append((run_id, self.starts[run_id]))  # type: ignore[union-attr]
            self.activator.activate(session_id, new)

    def describe(
        self, session_ids: list[str] | None, limit: int
    ) -> list[tuple[str, pykka.ActorRef[Any] | None, float, int]]:
        """(id, actor or None while activating, idle seconds, pending runs) of live sessions."""
        now = self.clock()
        if session_ids is None:
            chosen = list(self.live.items())[:limit]
        else:
            chosen = [(sid, self.live[sid]) for sid in session_ids if sid in self.live]
        return [(sid, e.ref, now - e.last_active, len(e.runs)) for sid, e in chosen]

    def _entry(self) -> _Entry:
        return _Entry(last_active=self.clock(), backlog=[])

    def stop_all(self) -> None:
        """Fail every run still pending (the runtime has stopped its tree)."""
        self.stopping = True
        self.finder.stop()
        for run_id in list(self.pending):
            self.failed(run_id, AgentError("RUNTIME_STOPPED", "the runtime stopped", run_id))

    # -- statistics ---------------------------------------------------------------------------

    def statistics(self) -> RuntimeStatistics:
        """Return a snapshot of the counters (the session and run counts agree)."""
        subs = [s.statistics() for s in self.bus.subscriptions]
        c = self.counters
        return RuntimeStatistics(
            live_sessions=len(self.live),
            runs_started=c.runs_started,
            runs_completed=c.runs_completed,
            runs_failed=c.runs_failed,
            runs_pending=len(self.pending),
            activations=c.activations,
            passivations=c.passivations,
            crashes=c.crashes,
            events_emitted=c.events,
            events_delivered=self.bus.delivered_total + sum(s.delivered for s in subs),
            events_dropped=self.bus.dropped_total + sum(s.dropped for s in subs),
            subscriptions=len(subs),
            runs_refused=c.runs_refused,
            stopped_versions=len(self.versions),
        )


def _fail(future: RunFuture, error: BaseException) -> None:
    try:
        raise error
    except BaseException:
        future.set_exception(sys.exc_info())
