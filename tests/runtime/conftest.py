"""Fixtures for the runtime tests: every runtime a test starts is stopped, and no thread leaks."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT

from praxo_actors.agent import AgentOptions
from praxo_actors.runtime import Runtime


def _leaked(before: set[threading.Thread], timeout: float) -> list[str]:
    """Return the names of threads not in ``before`` still alive after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    for thread in set(threading.enumerate()) - before:
        thread.join(max(deadline - time.monotonic(), 0.0))
    return sorted(t.name for t in set(threading.enumerate()) - before if t.is_alive())


@pytest.fixture
def runtime() -> Iterator[Callable[..., Runtime]]:
    """Start runtimes; at teardown stop them all and fail if any thread they started is left.

    Call it as ``runtime(agents={"default": factory}, **Runtime.start kwargs)``. Idle
    passivation is off (``idle_timeout=None``) unless the test asks for it.
    """
    before = set(threading.enumerate())
    started: list[Runtime] = []

    def start(
        agents: dict[str, Callable[[], AgentOptions]] | None = None, **kwargs: Any
    ) -> Runtime:
        kwargs.setdefault("idle_timeout", None)
        kwargs.setdefault("timeout", TIMEOUT)
        rt = Runtime.start(**kwargs)
        started.append(rt)
        for name, factory in (agents or {}).items():
            rt.register_agent(name, factory)
        return rt

    yield start
    for rt in reversed(started):
        rt.stop()
    assert _leaked(before, TIMEOUT) == []
