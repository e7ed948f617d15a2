"""The kernel's view and control of its live sessions, and its statistics.

:class:`KernelSessions` is a base of :class:`~praxo_actors.runtime._kernel._kernel.Kernel`: its
methods are the kernel's, on the loop thread, with no call added in between. Each reads or asks
one of the kernel's parts: the :class:`SessionTable` of live sessions, the :class:`Lifecycle`
that settles what a stopped session leaves behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors._errors import PraxoError
from praxo_actors.actors._checks import loop_owned
from praxo_actors.codes import AGENT_CANCELLED, RUNTIME_STOPPED
from praxo_actors.runtime._kernel._statistics import Counters, RuntimeStatistics

if TYPE_CHECKING:
    from praxo_actors.runtime._events._events import EventRouter
    from praxo_actors.runtime._kernel._lifecycle import Lifecycle
    from praxo_actors.runtime._kernel._runs import RunBook
    from praxo_actors.runtime._kernel._table import Ready, SessionTable
    from praxo_actors.runtime._kernel._versions import StoppedVersions

__all__ = ["KernelSessions"]


@loop_owned
class KernelSessions:
    """Look at and stop the kernel's live sessions; count (a base of the kernel)."""

    stopping: bool
    bus: EventRouter
    counters: Counters
    table: SessionTable
    runs: RunBook
    versions: StoppedVersions
    lifecycle: Lifecycle

    def session_down(
        self, session_id: str, ref: pykka.ActorRef[Any], crashed: bool, version: int = 0
    ) -> None:
        """Settle every run a stopped actor leaves behind (see :class:`Lifecycle`)."""
        self.lifecycle.session_down(session_id, ref, crashed, version)

    def restore_failed(self, session_id: str, ref: pykka.ActorRef[Any], error: PraxoError) -> None:
        """A session found its checkpoint unusable: fail its runs with the checkpoint's code."""
        self.lifecycle.restore_failed(session_id, ref, error)

    def when_ready(self, session_id: str, ready: Ready) -> None:
        """Call ``ready(ref)`` once the session is live (``ready(None)`` if it is not)."""
        self.table.when_ready(session_id, ready)

    def agent_of(self, session_id: str) -> str | None:
        """Return the agent of the newest run a live session has pending, as it was routed
        (None: no run pending, or the newest names no agent)."""
        entry = self.table.get(session_id)
        return None if entry is None or not entry.runs else entry.agent

    def is_live(self, session_id: str) -> bool:
        """Return whether an actor hosts (or is being started to host) the session."""
        return session_id in self.table

    def passivate(self, session_id: str, idle_seconds: float = 0.0) -> pykka.ActorRef[Any] | None:
        """Stop a live session if it has no run and has been idle that long; return its ref."""
        return self.table.passivate(session_id, idle_seconds)

    def passivate_idle(self, idle_seconds: float) -> int:
        """Passivate every session idle for ``idle_seconds``; return how many."""
        return self.table.passivate_idle(idle_seconds)

    def stop_session(self, session_id: str) -> pykka.ActorRef[Any] | None:
        """Stop a live session at a user's request; its pending runs fail ``AGENT_CANCELLED``
        (the one in flight is cut off first, its ``async`` callback cancelled)."""
        self.lifecycle.stop_runs(AGENT_CANCELLED, session_id)
        return self.table.stop_session(session_id)

    def describe(
        self, session_ids: list[str] | None, limit: int
    ) -> list[tuple[str, pykka.ActorRef[Any] | None, float, int]]:
        """(id, actor or None while activating, idle seconds, pending runs) of live sessions."""
        return self.table.describe(session_ids, limit)

    def begin_stop(self) -> None:
        """Refuse every new run from now on and end the runs in flight (the runtime is
        stopping): each publishes ``run.failed`` ``RUNTIME_STOPPED`` before the tree stops."""
        self.stopping = True
        self.lifecycle.stop_runs(RUNTIME_STOPPED)

    def statistics(self) -> RuntimeStatistics:
        """Return a snapshot of the counters (the session and run counts agree)."""
        events = self.bus.statistics()  # one snapshot: its counts never fall between reads
        c = self.counters
        return RuntimeStatistics(
            live_sessions=len(self.table),
            runs_started=c.runs_started,
            runs_completed=c.runs_completed,
            runs_failed=c.runs_failed,
            runs_pending=len(self.runs.pending),
            activations=c.activations,
            passivations=c.passivations,
            crashes=c.crashes,
            events_emitted=c.events,
            events_delivered=events.delivered,
            events_dropped=events.dropped,
            subscriptions=events.subscriptions,
            runs_refused=c.runs_refused,
            stopped_versions=len(self.versions),
        )
