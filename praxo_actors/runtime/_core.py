"""State the runtime's actors share: routing, pending runs, limits, the callback executors.

The routing table is the one place that decides which actor hosts a session. Activation,
passivation and crash handling all change it under one lock, so a run is never sent to an
actor that is about to stop idle, and every run that an actor leaves behind when it stops is
settled with a code (nothing waits forever).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pykka
import structlog

from praxo_actors._errors import (
    AgentError,
    PraxoError,
    RuntimeLimitError,
    SessionBusyError,
    SessionOverloadedError,
)
from praxo_actors.agent import AgentOptions
from praxo_actors.models import Event, RunResult
from praxo_actors.runtime._bridge import LoopBridge
from praxo_actors.runtime._futures import MNFuture
from praxo_actors.runtime._iopool import IOPool

if TYPE_CHECKING:
    from praxo_actors.runtime._events import EventRouter

__all__ = ["RunFuture", "RuntimeCore"]

logger = structlog.get_logger("praxo_actors.runtime")


def _no_sink(_event: Event) -> None:
    """Mark options whose events the session collects (the session never calls it)."""


class RunFuture(MNFuture[RunResult]):
    """The future of one run: ``get(timeout)``, ``await``, and cooperative ``cancel()``."""

    def __init__(self, run_id: str, session_id: str, cancel: Callable[[RunFuture], bool]) -> None:
        super().__init__()
        self.run_id = run_id
        self.session_id = session_id
        self._cancel = cancel

    def __repr__(self) -> str:
        return f"<RunFuture {self.run_id} {'done' if self.done() else 'pending'}>"

    def cancel(self) -> bool:
        """Ask for the run to stop; return False if it had already ended.

        A queued run is removed at once; a run in flight stops at its next step boundary. The
        future then raises :class:`~praxo_actors.AgentError` ``AGENT_CANCELLED``, unless the
        run completed the step it was in without needing another (cancellation is
        cooperative: a callback in flight is never interrupted).
        """
        if self.done():
            return False
        return self._cancel(self)


@dataclass(slots=True)
class _Entry:
    """One live (or activating) session in the routing table.

    It is activating while both ``ref`` and ``error`` are None; waiters wait on the core's
    ``activated`` condition (one for all entries: an Event each would cost ~1 KiB a session).
    """

    ref: pykka.ActorRef[Any] | None = None
    runs: dict[str, RunFuture] = field(default_factory=dict)
    last_active: float = 0.0
    error: BaseException | None = None
    # Encoded StartRuns routed while activating, sent in order once the actor is up.
    backlog: list[tuple[str, bytes]] | None = None

    @property
    def activating(self) -> bool:
        return self.ref is None and self.error is None


@dataclass
class RuntimeCounters:
    """Counters the runtime keeps (read with ``Runtime.statistics()``)."""

    runs_started: int = 0
    runs_completed: int = 0
    runs_failed: int = 0
    activations: int = 0
    passivations: int = 0
    crashes: int = 0
    events: int = 0


class RuntimeCore:
    """Shared by the runtime's actors; every method is safe from any thread."""

    def __init__(
        self,
        *,
        agents: dict[str, Callable[[], AgentOptions]],
        loop: asyncio.AbstractEventLoop,
        io_pool: IOPool,
        key: bytes | None,
        allowed_types: frozenset[str],
        max_live_sessions: int,
        max_queue: int,
        on_busy: str,
        store_timeout: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.agents = agents
        self.loop = loop
        self.io_pool = io_pool
        self.bridge = LoopBridge(loop)
        self.key = key
        self.allowed_types = allowed_types
        self.max_live_sessions = max_live_sessions
        self.max_queue = max_queue
        self.on_busy = on_busy
        self.store_timeout = store_timeout
        self.clock = clock
        self.lock = threading.Lock()
        self.activated = threading.Condition(self.lock)
        self.live: OrderedDict[str, _Entry] = OrderedDict()
        self.pending: dict[str, RunFuture] = {}
        # Sessions whose stop a user asked for: their leftover runs were cancelled, not crashed.
        self.user_stops: set[str] = set()
        # Completed runs whose checkpoint the store actor has not yet acknowledged. Kept here,
        # not per session entry: the run is committed, so its outcome is the store's to decide
        # even if its session stops or crashes meanwhile.
        self.results: dict[str, RunResult] = {}
        self.counters = RuntimeCounters()
        # agent name -> (options that emit events, options that do not)
        self._options: dict[str, tuple[AgentOptions, AgentOptions]] = {}
        self.store_ref: pykka.ActorRef[Any] = None  # type: ignore[assignment]  # set by Runtime
        self.bus_ref: pykka.ActorRef[Any] = None  # type: ignore[assignment]
        self.bus: EventRouter | None = None
        self.registry: Any = None
        self.stopping = False

    # -- agents ----------------------------------------------------------------------------

    def options_for(self, agent: str, events: bool = True) -> AgentOptions:
        """Return the options of a registered agent, with or without event collection.

        A run started while nobody subscribes builds no events at all (they would reach no one,
        and building them was a fifth of a run's work in the runtime).

        Raises:
            PraxoError: ``RUNTIME_UNKNOWN_AGENT``; ``RUNTIME_INVALID_CONFIG`` for a factory that
                does not return ``AgentOptions`` or returns options with their own ``sink``.
        """
        cached = self._options.get(agent)
        if cached is None:
            factory = self.agents.get(agent)
            if factory is None:
                raise PraxoError("RUNTIME_UNKNOWN_AGENT", f"no agent registered as {agent!r}")
            built = factory()
            if not isinstance(built, AgentOptions):
                raise PraxoError(
                    "RUNTIME_INVALID_CONFIG", f"agent factory {agent!r} must return AgentOptions"
                )
            if built.sink is not None:
                # Events of hosted runs go through the event bus, in order, to subscribers; a
                # sink called from a session would run on a scheduler thread.
                raise PraxoError(
                    "RUNTIME_INVALID_CONFIG",
                    f"agent {agent!r} has a sink: use runtime.events.subscribe(...) instead",
                )
            cached = (replace(built, sink=_no_sink), built)
            self._options[agent] = cached
        return cached[0] if events else cached[1]

    # -- events ----------------------------------------------------------------------------

    def has_subscribers(self) -> bool:
        """Return whether any event subscription exists (publishing is skipped otherwise)."""
        return self.bus is not None and self.bus.subscription_count > 0

    def count_events(self, n: int) -> None:
        """Count events emitted by runs (approximate under races; statistics only)."""
        self.counters.events += n

    # -- routing ---------------------------------------------------------------------------

    def touch(self, session_id: str) -> None:
        """Record activity on a session (its LRU position and idle clock)."""
        entry = self.live.get(session_id)
        if entry is not None:
            entry.last_active = self.clock()

    def admit(self, session_id: str, run_id: str, future: RunFuture) -> tuple[_Entry, bool]:
        """Register a run with its session's entry; return (entry, whether to activate).

        Raises:
            PraxoError: ``SESSION_BUSY``, ``SESSION_OVERLOADED`` or ``RUNTIME_SESSION_LIMIT``.
        """
        with self.lock:
            if self.stopping:
                raise PraxoError("RUNTIME_STOPPED", "the runtime is stopping")
            entry = self.live.get(session_id)
            activate = entry is None
            if entry is None:
                if len(self.live) >= self.max_live_sessions and not self._evict_locked():
                    raise RuntimeLimitError(
                        "RUNTIME_SESSION_LIMIT",
                        f"{len(self.live)} live sessions, none idle to passivate",
                    )
                entry = _Entry(last_active=self.clock())
                self.live[session_id] = entry
            else:
                if self.on_busy == "reject" and entry.runs:
                    raise SessionBusyError("SESSION_BUSY", f"session {session_id!r} is running")
                if len(entry.runs) > self.max_queue:
                    raise SessionOverloadedError(
                        "SESSION_OVERLOADED",
                        f"session {session_id!r} has {len(entry.runs)} runs pending",
                    )
                self.live.move_to_end(session_id)
            entry.runs[run_id] = future
            self.pending[run_id] = future
            self.counters.runs_started += 1
            return entry, activate

    def _evict_locked(self) -> bool:
        """Pick the least recently used idle session and ask it to passivate."""
        for session_id, entry in self.live.items():
            if not entry.runs and entry.ref is not None:
                del self.live[session_id]
                ref = entry.ref
                self.registry.unregister(session_id)
                self.counters.passivations += 1
                with contextlib.suppress(pykka.ActorDeadError):
                    ref.stop(block=False)
                return True
        return False

    def release_if_idle(self, session_id: str, ref: pykka.ActorRef[Any], idle_ns: int) -> bool:
        """Remove an idle session from routing so that it may stop; return whether it may."""
        with self.lock:
            entry = self.live.get(session_id)
            if entry is None or entry.ref is not ref or entry.runs:
                return False
            if (self.clock() - entry.last_active) * 1e9 < idle_ns:
                return False
            del self.live[session_id]
            self.registry.unregister(session_id)
            self.counters.passivations += 1
            return True

    def idle_sessions(self, idle_seconds: float) -> list[pykka.ActorRef[Any]]:
        """Return the refs of sessions idle for at least ``idle_seconds``."""
        now = self.clock()
        with self.lock:
            return [
                e.ref
                for e in self.live.values()
                if e.ref is not None and not e.runs and now - e.last_active >= idle_seconds
            ]

    def session_down(self, session_id: str, ref: pykka.ActorRef[Any], crashed: bool) -> None:
        """Settle every run the stopped actor leaves behind, and forget its entry."""
        with self.lock:
            entry = self.live.get(session_id)
            if entry is None or entry.ref is not ref:
                return
            del self.live[session_id]
            if crashed:
                self.counters.crashes += 1
            # A run that completed before the stop is committed: its checkpoint is on its way
            # to the store actor, which settles it.
            left = [run_id for run_id in entry.runs if run_id not in self.results]
            by_user = session_id in self.user_stops
            self.user_stops.discard(session_id)
        if self.stopping:
            code = "RUNTIME_STOPPED"
        elif by_user and not crashed:
            code = "AGENT_CANCELLED"
        else:  # it crashed, or its supervisor stopped it (a restart of the runtime's tree)
            code = "SESSION_CRASHED"
        if crashed:
            logger.warning("session_crashed", session_id=session_id, runs_failed=len(left))
        for run_id in left:
            self.settle_error(run_id, AgentError(code, "the session stopped", run_id))

    # -- settling runs ---------------------------------------------------------------------

    def _take(self, run_id: str, outcome: str) -> tuple[RunFuture | None, RunResult | None]:
        """Remove a run from the books; only the caller that gets its future settles it.

        ``outcome`` (``"completed"`` or ``"failed"``) is counted with the removal, under the lock.
        """
        with self.lock:
            future = self.pending.pop(run_id, None)
            if future is None:
                return None, None
            result = self.results.pop(run_id, None)
            if outcome == "completed" and result is not None:
                self.counters.runs_completed += 1
            else:
                self.counters.runs_failed += 1
            entry = self.live.get(future.session_id)
            if entry is not None and entry.runs.pop(run_id, None) is not None:
                entry.last_active = self.clock()
            return future, result

    def settle_error(self, run_id: str, error: BaseException) -> None:
        """Fail a run's future with ``error`` (at most once per run)."""
        future, _ = self._take(run_id, "failed")
        if future is not None:
            _fail(future, error)

    def settle_later(self, run_id: str, result: RunResult) -> None:
        """Hold a completed run's result until its checkpoint is stored."""
        with self.lock:
            if run_id in self.pending:
                self.results[run_id] = result

    def checkpoint_saved(self, run_id: str | None, error: str | None) -> None:
        """Complete a run whose checkpoint the store actor has written (its thread)."""
        if run_id is None:
            return
        future, result = self._take(run_id, "failed" if error is not None else "completed")
        if future is None:
            return
        if error is not None or result is None:
            _fail(future, PraxoError(error or "STORE_FAILED", "the checkpoint was not stored"))
            return
        future.set(result)


def _fail(future: RunFuture, error: BaseException) -> None:
    try:
        raise error
    except BaseException:
        future.set_exception(sys.exc_info())
