"""The session log's inbox on every store: accepted runs in order, taken out when they begin
or end, found by the scan of runs to resume."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.memory._inbox import INBOX, Accept, AcceptedRun
from praxo_actors.memory._log import Commit, JournalAppend, PendingRun, SessionLog

_SCHEMAS = itertools.count(1)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A store of each kind (PostgreSQL when a server is at hand)."""
    if request.param == "memory":
        made: Any = InMemoryStore()
    elif request.param == "sqlite":
        made = SQLiteStore(tmp_path / "log.sqlite3")
    else:
        from praxo_actors.memory import PostgresStore

        dsn = request.getfixturevalue("postgres_dsn")
        made = PostgresStore(dsn, schema=f"praxo_test_inbox_{next(_SCHEMAS)}")
    yield made
    made.close()


def _accept(run_id: str, deadline: int | None = None) -> Accept:
    return Accept("s", AcceptedRun(run_id, "default", f"input {run_id}", deadline))


def test_accepted_runs_are_kept_in_order_until_they_begin_or_end(store: Any) -> None:
    log = SessionLog(store)
    log.write_all([], [], [_accept("r1", 123), _accept("r2")])
    log.write_all([], [], [_accept("r3"), _accept("r2")])  # accepted twice: kept once
    [state] = log.load(["s"])
    assert state is not None and state.fault is None
    assert [(r.run_id, r.deadline_unix_ns) for r in state.inbox] == [
        ("r1", 123),
        ("r2", None),
        ("r3", None),
    ]
    assert [(sid, run.run_id) for sid, run in log.pending()] == [
        ("s", "r1"),
        ("s", "r2"),
        ("s", "r3"),
    ]
    # r1 begins: its first journal entry makes it the pending run and takes it out.
    begun = JournalAppend("s", PendingRun("r1", "default", "input r1", entries=1), "{}", True)
    assert log.write_all([], [begun]) == ([], [True])
    [state] = log.load(["s"])
    assert state is not None and state.pending is not None and state.pending.run_id == "r1"
    assert [r.run_id for r in state.inbox] == ["r2", "r3"]
    # r3 ends before it begins (cancelled): the commit of its outcome takes it out.
    assert log.write([Commit("s", result='{"run_id": "r3"}', inbox="r3")], []) == [True]
    # r2 too: the inbox is then empty, and its document gone.
    log.write([Commit("s", inbox="r2")], [])
    [state] = log.load(["s"])
    assert state is not None and state.inbox == []
    assert list(store.search(INBOX)) == []
    assert [run.run_id for _, run in log.pending()] == ["r1"]


def test_a_broken_inbox_is_a_broken_log(store: Any) -> None:
    store.put(INBOX, "s", {"runs": [{"run_id": 7}]})
    [state] = SessionLog(store).load(["s"])
    assert state is not None and state.fault == "the inbox is broken"
