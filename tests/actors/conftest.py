"""Fixtures of the executor's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _handover import Served


@pytest.fixture
def served() -> Iterator[Served]:
    """A loop on its own thread, stopped and closed after the test."""
    running = Served()
    yield running
    running.stop()
