"""Schedule rows in every store: insert once per id, replace by compare-and-set, delete."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.memory._schedules import (
    ScheduleRow,
    delete_row,
    insert_row,
    keyed_id,
    read_row,
    read_rows,
    replace_row,
)

_SCHEMAS = itertools.count()


def _row(schedule_id: str = "sch-1", session_id: str = "s", text: str = "hi") -> ScheduleRow:
    return ScheduleRow(schedule_id, session_id, "", text, "after", 1_000)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """Each store that keeps schedules in one process."""
    made = InMemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "s.db")
    with made:
        yield made


def test_insert_keeps_the_first_row_under_an_id(store: Any) -> None:
    """A second insert under the same id returns the row already stored, unchanged."""
    first = insert_row(store, _row(text="first"))
    again = insert_row(store, _row(text="second"))
    assert first.input == again.input == "first"
    assert [row.input for row in read_rows(store)] == ["first"]


def test_replace_is_a_compare_and_set(store: Any) -> None:
    """Of two writers holding the same read, only the first replaces the row."""
    insert_row(store, _row())
    row, text = read_row(store, "sch-1")
    assert row is not None and text is not None
    claimed = replace_row(store, text, msgspec.structs.replace(row, lease_owner="a"))
    lost = replace_row(store, text, msgspec.structs.replace(row, lease_owner="b"))
    assert claimed is not None and lost is None
    assert read_row(store, "sch-1")[0].lease_owner == "a"  # type: ignore[union-attr]


def test_replace_of_a_deleted_row_fails_and_delete_says_what_it_found(store: Any) -> None:
    """A row cancelled under a claimer cannot be claimed; deleting twice finds it once."""
    insert_row(store, _row())
    _, text = read_row(store, "sch-1")
    assert delete_row(store, "sch-1") is True
    assert delete_row(store, "sch-1") is False
    assert replace_row(store, text or "", _row()) is None
    assert read_row(store, "sch-1") == (None, None)


def test_rows_list_by_session_and_keyed_ids_are_stable(store: Any) -> None:
    """Listing filters by session; a key names the same id for the same session only."""
    insert_row(store, _row("sch-a", "s1"))
    insert_row(store, _row("sch-b", "s2"))
    assert [row.id for row in read_rows(store, "s2")] == ["sch-b"]
    assert keyed_id("s1", "daily") == keyed_id("s1", "daily") != keyed_id("s2", "daily")


def test_racing_claims_in_threads_let_one_win(store: Any) -> None:
    """Eight threads replacing the same read of a row: exactly one succeeds."""
    insert_row(store, _row())
    row, text = read_row(store, "sch-1")
    assert row is not None and text is not None
    barrier = threading.Barrier(8)
    wins: list[str] = []

    def claim(i: int) -> None:
        barrier.wait(5)
        if replace_row(store, text, msgspec.structs.replace(row, lease_owner=f"h{i}")):
            wins.append(f"h{i}")

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(wins) == 1
    assert read_row(store, "sch-1")[0].lease_owner == wins[0]  # type: ignore[union-attr]


def test_postgres_hosts_claim_each_row_once(postgres_dsn: str) -> None:
    """Two PostgreSQL stores on one database (two hosts): one claim of a read wins."""
    from praxo_actors.memory import PostgresStore

    schema = f"praxo_test_sched_{next(_SCHEMAS)}"
    with (
        PostgresStore(postgres_dsn, schema=schema) as a,
        PostgresStore(postgres_dsn, schema=schema) as b,
    ):
        insert_row(a, _row(text="from a"))
        assert insert_row(b, _row(text="from b")).input == "from a"
        row, text = read_row(b, "sch-1")
        assert row is not None and text is not None
        assert replace_row(a, text, msgspec.structs.replace(row, lease_owner="a")) is not None
        assert replace_row(b, text, msgspec.structs.replace(row, lease_owner="b")) is None
        assert read_row(b, "sch-1")[0].lease_owner == "a"  # type: ignore[union-attr]
        assert delete_row(b, "sch-1") and read_rows(a) == []
