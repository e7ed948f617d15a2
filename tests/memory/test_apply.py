"""``Store.apply``: puts and deletes in one change."""

from __future__ import annotations

from pathlib import Path

import pytest

from praxo_actors import PraxoError
from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.memory._base import StoreBase


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreBase:
    made: StoreBase = InMemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "a")
    request.addfinalizer(made.close)
    return made


def test_apply_puts_and_deletes_together(store: StoreBase) -> None:
    store.put(("a",), "old", {"v": 0})
    store.apply([(("a",), "new", {"v": 1}), (("b",), "x", {"v": 2})], [(("a",), "old")])
    assert store.get(("a",), "old") is None
    assert store.get(("a",), "new").value == {"v": 1}
    assert store.get(("b",), "x").value == {"v": 2}


def test_a_bad_entry_changes_nothing(store: StoreBase) -> None:
    store.put(("a",), "kept", {"v": 0})
    with pytest.raises(PraxoError) as info:
        store.apply([(("a",), "new", {"v": 1}), (("a",), "", {"v": 2})], [(("a",), "kept")])
    assert info.value.code == "MEMORY_INVALID_KEY"
    assert store.get(("a",), "new") is None
    assert store.get(("a",), "kept").value == {"v": 0}
