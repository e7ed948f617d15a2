"""Fixtures of the schedule tests: a clock at a known wall time, runtimes that are all
stopped, and a record of the schedule events."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _helpers import assert_no_new_threads
from _schedule_helpers import START, TIMEOUT, Fires

from praxo_actors.agent import new_agent_options
from praxo_actors.runtime import Runtime
from praxo_actors.testing import EchoModel, ManualClock


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
