"""The pytest plugin (entry point ``praxo_actors``): fixtures for models, stores and events.

The fixtures import what they use when they run, so the plugin, loaded by every pytest session
in an environment where praxo-actors is installed, imports no store and no agent code itself.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from praxo_actors.memory import InMemoryStore, SQLiteStore
    from praxo_actors.testing import EventRecorder, ScriptedModel, ScriptItem

__all__ = ["event_recorder", "memory_store", "scripted_model_factory", "sqlite_store"]

_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Note a failed test body, so fixture teardown checks do not pile onto its failure."""
    report = yield
    if report.when == "call" and report.failed:
        item.stash[_FAILED] = True
    return report


@pytest.fixture
def scripted_model_factory(
    request: pytest.FixtureRequest,
) -> Iterator[Callable[..., ScriptedModel]]:
    """Build ``ScriptedModel``s; at teardown, fail if a strict one has replies left.

    Call it as ``make(script, strict=True)``; ``strict=False`` allows unused replies.
    """
    from praxo_actors.testing import ScriptedModel

    strict_models: list[ScriptedModel] = []

    def make(script: Iterable[ScriptItem], *, strict: bool = True) -> ScriptedModel:
        model = ScriptedModel(script)
        if strict:
            strict_models.append(model)
        return model

    yield make
    leftover = [m.remaining for m in strict_models if m.remaining]
    if leftover and not request.node.stash.get(_FAILED, False):
        pytest.fail(f"scripted models left replies unused: {leftover}")


@pytest.fixture
def memory_store() -> Iterator[InMemoryStore]:
    """An empty ``InMemoryStore``, closed after the test."""
    from praxo_actors.memory import InMemoryStore

    with InMemoryStore() as store:
        yield store


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    """A ``SQLiteStore`` in a fresh file under ``tmp_path``, closed after the test."""
    from praxo_actors.memory import SQLiteStore

    with SQLiteStore(tmp_path / "memory.sqlite3") as store:
        yield store


@pytest.fixture
def event_recorder() -> EventRecorder:
    """An ``EventRecorder`` to pass as a run's ``sink`` or to subscribe to the event bus."""
    from praxo_actors.testing import EventRecorder

    return EventRecorder()
