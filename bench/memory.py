"""Measure memory store throughput: put and get per second, SQLite against in-memory.

Run: ``python bench/memory.py [--dir DIR] [--puts N] [--gets N]``. One run, printed. Each
SQLite put is its own committed transaction, so with ``synchronous=FULL`` its rate is bound
by the disk's fsync latency; ``NORMAL`` shows the cost of the write itself. ``commit/s`` is
the session log's write of one run's commit (a record of two messages, a result and the head,
one transaction), as the runtime's store actor makes it, over 100 sessions.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from praxo_actors.core._log_docs import dump_record
from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.memory._base import StoreBase
from praxo_actors.memory._log import Commit, SessionLog
from praxo_actors.models import message_assistant, message_user

VALUE = {"user": "ada", "note": "likes tea and long walks", "score": 0.75, "tags": ["a", "b"]}


def rate(count: int, fn: Callable[[int], object]) -> float:
    """Return how many calls of ``fn`` per second ran, over ``count`` calls."""
    start = time.perf_counter()
    for i in range(count):
        fn(i)
    return count / (time.perf_counter() - start)


def measure(store: StoreBase, puts: int, gets: int) -> tuple[float, float, float, float]:
    """Return (puts/s, gets/s, searches/s, log commits/s) for one store."""
    put = rate(puts, lambda i: store.put(("bench", str(i % 10)), f"k{i}", VALUE))
    get = rate(gets, lambda i: store.get(("bench", str(i % 10)), f"k{i % puts}"))
    # A query nothing matches: every search reads every item below the prefix.
    search = rate(50, lambda i: store.search(("bench",), query=f"absent-{i}", limit=10))
    return put, get, search, commits(store, puts)


def commits(store: StoreBase, count: int) -> float:
    """Return the session log's commits per second, each one run of a session (100 of them)."""
    log = SessionLog(store)
    record = dump_record("s", 1, "r", [message_user("hello"), message_assistant("ok")])
    result = '{"output":"ok","run_id":"r"}'

    def commit(i: int) -> None:
        version = i // 100  # session i % 100 is at this version before its commit
        done = log.write([Commit(f"s{i % 100}", version, "r", record, result=result)], [])
        assert done == [True], "a commit was refused"

    return rate(count, commit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=None, help="where the SQLite files go")
    parser.add_argument("--puts", type=int, default=2_000)
    parser.add_argument("--gets", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        rows = []
        backends: list[tuple[str, Callable[[], StoreBase]]] = [
            ("SQLiteStore synchronous=FULL", lambda: SQLiteStore(Path(tmp) / "full.sqlite3")),
            (
                "SQLiteStore synchronous=NORMAL",
                lambda: SQLiteStore(Path(tmp) / "normal.sqlite3", synchronous="NORMAL"),
            ),
            ("InMemoryStore", InMemoryStore),
        ]
        for label, make in backends:
            with make() as store:
                rows.append((label, *measure(store, args.puts, args.gets)))
    print(f"memory store: {args.puts} puts, {args.gets} gets, then searches that scan all puts")
    print(f"{'backend':<32}{'put/s':>12}{'get/s':>12}{'search/s':>12}{'commit/s':>12}")
    for label, put, get, search, commit in rows:
        print(f"{label:<32}{put:>12,.0f}{get:>12,.0f}{search:>12,.0f}{commit:>12,.0f}")


if __name__ == "__main__":
    main()
