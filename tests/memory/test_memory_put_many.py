"""``put_many`` writes a batch of documents together, or nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from praxo_actors import PraxoError
from praxo_actors.memory import InMemoryStore, SQLiteStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[InMemoryStore | SQLiteStore]:
    s = InMemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "m.db")
    yield s
    s.close()


def test_put_many_stores_every_entry(store: InMemoryStore | SQLiteStore) -> None:
    """Every entry of a batch is readable afterwards, the last write to a key winning."""
    store.put_many(
        [(("a",), "k1", {"v": 1}), (("a", "b"), "k2", {"v": 2}), (("a",), "k1", {"v": 3})]
    )
    first, second = store.get(("a",), "k1"), store.get(("a", "b"), "k2")
    assert first is not None and first.value == {"v": 3}
    assert second is not None and second.value == {"v": 2}


def test_put_many_writes_nothing_when_an_entry_is_invalid(
    store: InMemoryStore | SQLiteStore,
) -> None:
    """A batch with one invalid entry is refused whole, with that entry's code."""
    with pytest.raises(PraxoError) as info:
        store.put_many([(("a",), "ok", {"v": 1}), (("a",), "", {"v": 2})])
    assert info.value.code == "MEMORY_INVALID_KEY"
    assert store.get(("a",), "ok") is None
