"""Fixtures for the runtime tests: every runtime a test starts is stopped, and no thread leaks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _helpers import assert_no_new_threads
from _runtime_helpers import TIMEOUT

from praxo_actors.agent import AgentOptions
from praxo_actors.runtime import Runtime


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
    assert_no_new_threads(before, TIMEOUT)
