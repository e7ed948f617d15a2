"""The runtime's counters: one record each collaborator of the kernel counts into."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

__all__ = ["Counters", "RuntimeStatistics"]


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


@dataclass(slots=True)
class Counters:
    """The kernel's counts (on the loop thread, so plain ints)."""

    runs_refused: int = 0
    runs_started: int = 0
    runs_completed: int = 0
    runs_failed: int = 0
    activations: int = 0
    passivations: int = 0
    crashes: int = 0
    events: int = 0
