"""Fixtures of the provider tests: a loopback server and a virtual clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _model_servers import Server, serve
from _payloads import VirtualClock


@pytest.fixture
def server(no_thread_leaks: None) -> Iterator[Server]:
    """Serve scripted replies on 127.0.0.1; fail if a thread of it (or the test) is left."""
    with serve() as running:
        yield running


@pytest.fixture
def clock() -> VirtualClock:
    """Return a virtual clock."""
    return VirtualClock()
