"""The SQLite store persists, configures SQLite for durability, and versions its schema."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from praxo_actors import PraxoError
from praxo_actors.memory import MemoryStoreError, SQLiteStore
from praxo_actors.memory._sqlite import SCHEMA_VERSION


def pragma(store: SQLiteStore, name: str) -> object:
    return store._conn.execute(f"PRAGMA {name}").fetchone()[0]


def test_items_survive_closing_and_reopening(tmp_path: Path) -> None:
    """What one store object wrote, a new one on the same file reads back."""
    path = tmp_path / "m.sqlite3"
    with SQLiteStore(path) as store:
        store.put(("a", "b"), "k", {"v": [1, 2]})
        store.put(("a",), "gone", {})
        assert store.delete(("a",), "gone")
    with SQLiteStore(path) as store:
        item = store.get(("a", "b"), "k")
        assert item is not None
        assert item.value == {"v": [1, 2]}
        assert store.get(("a",), "gone") is None
        assert store.list_namespaces() == [("a", "b")]


def test_the_file_uses_wal_and_full_synchronous_by_default(tmp_path: Path) -> None:
    """A file store runs in WAL mode with synchronous=FULL (2)."""
    with SQLiteStore(tmp_path / "m.sqlite3") as store:
        assert pragma(store, "journal_mode") == "wal"
        assert pragma(store, "synchronous") == 2


def test_synchronous_normal_can_be_chosen(tmp_path: Path) -> None:
    """``synchronous="NORMAL"`` sets SQLite's NORMAL (1) level."""
    with SQLiteStore(tmp_path / "m.sqlite3", synchronous="NORMAL") as store:
        assert pragma(store, "synchronous") == 1


def test_an_unknown_synchronous_level_is_refused(tmp_path: Path) -> None:
    """Only FULL and NORMAL are accepted, and nothing is created for another value."""
    with pytest.raises(ValueError, match="synchronous"):
        SQLiteStore(tmp_path / "m.sqlite3", synchronous="OFF")  # type: ignore[arg-type]
    assert not (tmp_path / "m.sqlite3").exists()


def test_the_schema_version_is_recorded(tmp_path: Path) -> None:
    """A new database carries the schema version in ``user_version``."""
    with SQLiteStore(tmp_path / "m.sqlite3") as store:
        assert pragma(store, "user_version") == SCHEMA_VERSION == 1


def test_an_unknown_schema_version_is_refused(tmp_path: Path) -> None:
    """A file written by another schema version fails with MEMORY_SCHEMA_VERSION."""
    path = tmp_path / "m.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(MemoryStoreError) as info:
        SQLiteStore(path)
    assert info.value.code == "MEMORY_SCHEMA_VERSION"


def test_a_file_that_is_not_a_database_fails_store_corrupt(tmp_path: Path) -> None:
    """Opening garbage raises ``STORE_CORRUPT``, not sqlite3's own error."""
    path = tmp_path / "m.sqlite3"
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(PraxoError) as info:
        SQLiteStore(path)
    assert info.value.code == "STORE_CORRUPT"


def test_memory_databases_work(tmp_path: Path) -> None:
    """``":memory:"`` gives a working, private store, shared by the store's threads."""
    with SQLiteStore(":memory:") as store:
        store.put(("a",), "k", {"v": 1})
        seen: list[object] = []
        thread = threading.Thread(target=lambda: seen.append(store.get(("a",), "k")))
        thread.start()
        thread.join(timeout=10)
        assert [item.value for item in seen] == [{"v": 1}]  # type: ignore[attr-defined]
    with SQLiteStore(":memory:") as other:
        assert other.get(("a",), "k") is None


def test_another_connection_sees_an_acknowledged_put(tmp_path: Path) -> None:
    """A put is committed when it returns: a second store on the file reads it at once."""
    path = tmp_path / "m.sqlite3"
    with SQLiteStore(path) as writer, SQLiteStore(path) as reader:
        writer.put(("a",), "k", {"v": 1})
        item = reader.get(("a",), "k")
        assert item is not None
        assert item.value == {"v": 1}
        reader.put(("a",), "k", {"v": 2})
        again = writer.get(("a",), "k")
        assert again is not None
        assert again.value == {"v": 2}


def test_a_partial_search_leaves_no_read_transaction_open(tmp_path: Path) -> None:
    """After a filtered search stops early, another connection can still checkpoint the WAL."""
    path = tmp_path / "m.sqlite3"
    with SQLiteStore(path) as store:
        for i in range(50):
            store.put(("a",), f"{i:02}", {"i": i})
        assert len(store.search(("a",), query="i", limit=2)) == 2
        assert not store._conn.in_transaction
        other = sqlite3.connect(path)
        try:
            busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            other.close()
        assert busy == 0


def test_path_and_repr_name_the_file(tmp_path: Path) -> None:
    """The store keeps the path it was opened on and shows it in its repr."""
    path = tmp_path / "m.sqlite3"
    with SQLiteStore(path) as store:
        assert store.path == str(path)
        assert repr(store) == f"SQLiteStore({str(path)!r})"
