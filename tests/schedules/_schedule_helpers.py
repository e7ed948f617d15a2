"""Shared helpers of the schedule tests: a known wall time and a record of schedule events."""

from __future__ import annotations

import datetime as dt
import threading

import pytest

from praxo_actors.models import Event

TIMEOUT = 10.0
START = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


class Fires:
    """The ``schedule.*`` events a runtime published, waited for with a bound."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def of(self, kind: str = "schedule.fired") -> list[Event]:
        with self._cond:
            return [e for e in self.events if e.type == kind]

    def wait(self, n: int, kind: str = "schedule.fired", timeout: float = TIMEOUT) -> list[Event]:
        """Wait until ``n`` events of ``kind`` came (fail the test otherwise); return them."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.of(kind)) >= n, timeout):
                pytest.fail(f"{len(self.of(kind))} of {n} {kind} events within {timeout} s")
        return self.of(kind)
