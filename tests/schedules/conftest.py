"""Fixtures of the schedule tests: a clock at a known wall time, runtimes that are all
stopped, and a record of the schedule events."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _helpers import assert_no_new_threads

from praxo_actors.agent import new_agent_options
from praxo_actors.models import Event
from praxo_actors.runtime import Runtime
from praxo_actors.testing import EchoModel, ManualClock

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


@pytest.fixture
def clock() -> ManualClock:
    """A manual clock reading 2030-01-01 00:00 UTC."""
    return ManualClock(START.timestamp())


@pytest.fixture
def runtime() -> Iterator[Callable[..., tuple[Runtime, Fires]]]:
    """Start runtimes with an echoing ``default`` agent (``durable`` as asked) and a record of
    their schedule events; stop them all at teardown and check no thread is left."""
    before = set(threading.enumerate())
    started: list[Runtime] = []

    def start(durable: bool = False, register: bool = True, **kwargs: Any) -> tuple[Runtime, Fires]:
        kwargs.setdefault("idle_timeout", None)
        kwargs.setdefault("timeout", TIMEOUT)
        rt = Runtime.start(**kwargs)
        started.append(rt)
        fires = Fires()
        rt.events.subscribe(fires, "schedule.*")
        if register:
            rt.register_agent("default", lambda: new_agent_options(EchoModel()), durable=durable)
        return rt, fires

    yield start
    for rt in reversed(started):
        rt.stop()
    assert_no_new_threads(before)
