"""The live sessions: which actor hosts each one, their pending runs, and LRU passivation.

Owned by the :class:`~praxo_actors.runtime._kernel._kernel.Kernel`, on the loop thread (no
lock). An entry is *activating* (no actor yet, a backlog of messages) until its actor has
started and its checkpoint has been read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pykka

from praxo_actors._log import get_logger
from praxo_actors.actors._checks import loop_owned
from praxo_actors.runtime._kernel._statistics import Counters

__all__ = ["Entry", "Ready", "SessionTable"]

logger = get_logger("praxo_actors.runtime")

Ready = Callable[[pykka.ActorRef[Any] | None], None]

# Shared by every idle entry: a dict that has held a run keeps its table (~190 bytes) after
# the run is popped, on each of 100,000 idle sessions; this read-only one costs nothing each.
_NO_RUNS: Mapping[str, None] = MappingProxyType({})


def _no_runs() -> Mapping[str, None]:
    return _NO_RUNS


@dataclass(slots=True, eq=False)
class Entry:
    """One live or activating session: its actor (None while activating) and pending runs.

    ``runs`` is read-only: :meth:`add_run` and :meth:`pop_run` change it. It holds the ids of
    the session's pending runs, in order (their futures are the run book's): a dict of strings
    and ``None`` is one the collector does not track, so a run in flight adds no object here.
    Compared (and hashed) by identity.
    """

    ref: pykka.ActorRef[Any] | None = None
    runs: Mapping[str, None] = field(default_factory=_no_runs)
    last_active: float = 0.0
    # (run id, encoded message) routed while activating; sent in order after the Restore.
    backlog: list[tuple[str, bytes]] | None = None
    # The agent of the newest run routed to it that named one, while it has runs pending.
    agent: str | None = None

    def add_run(self, run_id: str) -> None:
        """Add a pending run (the dict is made for the session's first run in flight)."""
        runs = self.runs
        if runs is _NO_RUNS:
            self.runs = {run_id: None}
        else:
            assert isinstance(runs, dict)
            runs[run_id] = None

    def pop_run(self, run_id: str) -> bool:
        """Remove a pending run; return whether it was pending."""
        runs = self.runs
        if run_id not in runs:
            return False
        if len(runs) == 1:
            self.runs = _NO_RUNS
            self.agent = None
            return True
        assert isinstance(runs, dict)
        del runs[run_id]
        return True


@loop_owned
class SessionTable:
    """The live and activating sessions, least recently used first."""

    def __init__(self, registry: Any, counters: Counters, clock: Callable[[], float]) -> None:
        self.registry = registry
        self.counters = counters
        self.clock = clock
        # A dict, kept in LRU order by re-inserting on use: an OrderedDict's linked nodes cost
        # ~45 bytes more per live session.
        self.live: dict[str, Entry] = {}
        self.user_stops: set[str] = set()
        # Who waits for an activating entry to be live: kept here, not in a slot of every entry
        # (four slots, not five, put an entry in the allocator's 64-byte class, not the 80).
        self.waiters: dict[Entry, list[Ready]] = {}

    def __len__(self) -> int:
        return len(self.live)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self.live

    def get(self, session_id: str) -> Entry | None:
        """Return the session's entry, None if it is not live."""
        return self.live.get(session_id)

    def add(self, session_id: str) -> Entry:
        """Add an activating entry for a session (most recently used)."""
        entry = self.live[session_id] = Entry(last_active=self.clock(), backlog=[])
        return entry

    def touch(self, session_id: str, entry: Entry) -> None:
        """Mark a session as used now."""
        live = self.live
        del live[session_id]
        live[session_id] = entry
        entry.last_active = self.clock()

    def drop(self, session_id: str, entry: Entry) -> bool:
        """Forget ``entry`` if it is still the session's; return whether it was."""
        if self.live.get(session_id) is not entry:
            return False
        del self.live[session_id]
        # Whoever waits for it to be live learns that it is not (it will not be, as this one).
        self.wake(entry, None)
        return True

    def when_ready(self, session_id: str, ready: Ready) -> None:
        """Call ``ready(ref)`` once the session is live (``ready(None)`` if it is not)."""
        entry = self.live.get(session_id)
        if entry is None or entry.ref is not None:
            ready(None if entry is None else entry.ref)
        else:
            self.waiters.setdefault(entry, []).append(ready)

    def wake(self, entry: Entry, ref: pykka.ActorRef[Any] | None) -> None:
        """Call the waiters of an entry that is now live (or abandoned: ``ref`` None)."""
        for ready in self.waiters.pop(entry, ()):
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

    def evict(self) -> bool:
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
