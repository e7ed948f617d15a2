"""Fixtures for the observer tests: a runtime running demo-like sessions and its observer,
both stopped by the test."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest
from _helpers import assert_no_new_threads
from _observed import TIMEOUT, Observed, demo_agent

from praxo_actors.observer import ObserverServer
from praxo_actors.runtime import Runtime


@pytest.fixture
def observed() -> Iterator[Observed]:
    """Start a runtime with the demo agent and its observer; stop both, leaving no thread."""
    before = set(threading.enumerate())
    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    server = None
    try:
        runtime.register_agent("demo", demo_agent)
        server = ObserverServer(runtime, timeout=TIMEOUT)
        with httpx.Client(base_url=server.url, timeout=TIMEOUT) as client:
            yield Observed(runtime, server, client)
    finally:
        runtime.stop()
        if server is not None:
            server.stop()
    assert_no_new_threads(before, TIMEOUT)
