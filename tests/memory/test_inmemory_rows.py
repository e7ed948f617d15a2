"""The in-memory store's packed rows answer every read as the SQLite store does."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.memory._base import StoreBase


class Ticks:
    """A clock reading 1, 2, 3… nanoseconds, one tick per read."""

    def __init__(self, start: int = 1) -> None:
        self._counter = itertools.count(start)

    def __call__(self) -> int:
        return next(self._counter)


def _everything(store: StoreBase) -> list[tuple[object, ...]]:
    found = store.search((), limit=10_000)
    return [(i.namespace, i.key, i.value, i.created_ns, i.updated_ns) for i in found]


def test_many_commits_read_back_as_in_sqlite(tmp_path: Path) -> None:
    """After 400 random puts, batches and deletes, every read matches SQLite's answer."""
    rng = random.Random(7)
    memory, sqlite = InMemoryStore(clock=Ticks()), SQLiteStore(tmp_path / "s.db", clock=Ticks())
    namespaces = [("praxo", "records"), ("praxo", "heads"), ("app", "ü")]
    keys = [f"s{i}#{j}" for i in range(6) for j in range(3)]
    with memory, sqlite:
        for step in range(400):
            ns, key = rng.choice(namespaces), rng.choice(keys)
            value = {"step": step, "text": "é" * rng.randrange(4), "n": rng.randrange(2**62)}
            op = rng.randrange(4)
            if op == 0:
                assert memory.delete(ns, key) == sqlite.delete(ns, key)
            for store in (memory, sqlite) if op else ():
                if op == 1:
                    store.apply([(ns, key, value), (ns, key + "x", {})], [(ns, keys[0])])
                else:
                    store.put(ns, key, value)
            assert memory.get(ns, key) == sqlite.get(ns, key)
            assert memory.get_many(ns, keys) == sqlite.get_many(ns, keys)
        assert _everything(memory) == _everything(sqlite) != []
        assert memory.list_namespaces() == sqlite.list_namespaces()
        assert [i.key for i in memory.search(("praxo",), limit=5, offset=3)] == [
            i.key for i in sqlite.search(("praxo",), limit=5, offset=3)
        ]


@pytest.mark.parametrize("start", [2**63 - 1, 2**63 + 5, -(2**63) - 1, 0])
def test_stamps_of_any_size_round_trip(start: int) -> None:
    """A clock past 64 bits still gives back exact ``created_ns`` and ``updated_ns``."""
    with InMemoryStore(clock=Ticks(start)) as store:
        store.put(("a",), "k", {"v": "x\u2028y"})
        store.put(("a",), "k", {"v": 2})
        item = store.get(("a",), "k")
        assert item is not None
        assert (item.value, item.created_ns, item.updated_ns) == ({"v": 2}, start, start + 1)
        assert [i.created_ns for i in store.search(("a",))] == [start]
