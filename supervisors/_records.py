"""Frozen records the supervisors return: children, counts and statistics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pykka

from supervisors._spec import ChildType, Restart

__all__ = ["ChildCounts", "ChildRecord", "SupervisorStatistics"]


@dataclass(frozen=True, slots=True)
class ChildRecord:
    """One child as ``which_children()`` reports it.

    ``ref`` is None while the child is not running; ``restarting`` is True while a failed
    restart waits to be tried again (OTP's ``restarting``).
    """

    id: str
    ref: pykka.ActorRef[Any] | None
    restart: Restart
    type: ChildType
    restarting: bool = False


@dataclass(frozen=True, slots=True)
class ChildCounts:
    """Child counts as ``count_children()`` reports them (OTP's four counters)."""

    specs: int
    active: int
    supervisors: int
    workers: int


@dataclass(frozen=True, slots=True)
class SupervisorStatistics:
    """A supervisor's counters since it started.

    Attributes:
        restarts: Restart attempts counted against the restart intensity.
        failed_restarts: Restart attempts whose start failed (each is retried).
        active: Children running now.
        specs: Child specifications held now.
        abandoned: Children that did not stop within their shutdown time.
    """

    restarts: int
    failed_restarts: int
    active: int
    specs: int
    abandoned: int
