"""Fixtures for the supervision tests: every actor a test starts is stopped, no thread leaks."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pykka
import pytest
from _supervision_helpers import TIMEOUT, SharedLoopActor

from supervisors import DynamicSupervisor, Supervisor


def _stop_started(before: set[pykka.ActorRef[Any]]) -> None:
    """Stop every actor not in ``before``: supervisors first, parents before children."""
    started = [ref for ref in pykka.ActorRegistry.get_all() if ref not in before]
    supervisors = [r for r in started if issubclass(r.actor_class, Supervisor | DynamicSupervisor)]
    others = [ref for ref in reversed(started) if ref not in supervisors]
    for ref in supervisors + others:
        ref.stop(block=False).get(timeout=TIMEOUT)


@pytest.fixture(autouse=True)
def _stop_actors_and_check_threads(no_thread_leaks: None) -> Iterator[None]:
    """Stop the actors a test left running; ``no_thread_leaks`` then checks its threads."""
    actors_before = set(pykka.ActorRegistry.get_all())
    yield
    _stop_started(actors_before)


@pytest.fixture
def shared_pool() -> Iterator[ThreadPoolExecutor]:
    """Give SharedLoopActor a two-thread pool for the test's duration."""
    actors_before = set(pykka.ActorRegistry.get_all())
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="shared-loop")
    SharedLoopActor.pool = pool
    yield pool
    _stop_started(actors_before)
    SharedLoopActor.pool = None
    pool.shutdown(wait=True)
