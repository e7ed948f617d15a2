"""The log's writer keeps the heads it wrote: a commit on a warm session reads no head back,
and a change made by anyone else still decides the next commit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from praxo_actors.core import encode_json
from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.memory._base import Namespace, StoreBase
from praxo_actors.memory._log import HEADS, Commit, SessionLog
from praxo_actors.memory._log_types import RESULTS_KEPT


class _Counting(InMemoryStore):
    """An in-memory store that records the namespaces of the log's reads."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[Namespace] = []

    def _read_texts(self, namespace: Namespace, keys: list[str]) -> list[str | None]:
        self.reads.append(namespace)
        return super()._read_texts(namespace, keys)


class _CountingSQLite(SQLiteStore):
    reads: list[Namespace]

    def _read_texts(self, namespace: Namespace, keys: list[str]) -> list[str | None]:
        self.reads.append(namespace)
        return super()._read_texts(namespace, keys)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreBase]:
    """A counting in-memory or SQLite store, closed after the test."""
    made: StoreBase
    if request.param == "memory":
        made = _Counting()
    else:
        made = _CountingSQLite(tmp_path / "log.db")
        made.reads = []
    with made:
        yield made


def _commit(sid: str, expected: int, run: str) -> Commit:
    record = encode_json({"format": "praxo.record", "run_id": run, "seq": expected + 1})
    result = encode_json({"output": "ok", "run_id": run})
    return Commit(sid, expected, run, record, result=result, agent="a")


def _reads(store: StoreBase) -> list[Namespace]:
    reads: list[Namespace] = store.reads  # type: ignore[attr-defined]
    return reads


def test_a_commit_on_a_warm_session_reads_no_head(store: StoreBase) -> None:
    """The first commit reads the head; the next ones, of the same writer, read none."""
    log = SessionLog(store, keep_heads=True)
    assert log.write([_commit("s", 0, "r1")], []) == [True]
    assert HEADS in _reads(store)
    _reads(store).clear()
    for n in range(1, 5):
        assert log.write([_commit("s", n, f"r{n + 1}")], []) == [True]
    assert HEADS not in _reads(store)
    assert _reads(store) == []  # nothing read at all: the ring has not wrapped around
    assert store.get(HEADS, "s").value == {  # type: ignore[union-attr]
        "agent": "a",
        "base": 0,
        "results": 5,
        "version": 5,
    }


def test_a_log_that_does_not_keep_heads_reads_each(store: StoreBase) -> None:
    """Without ``keep_heads`` (a reader, or a store shared by hosts) every commit reads."""
    log = SessionLog(store)
    for n in range(3):
        assert log.write([_commit("s", n, f"r{n + 1}")], []) == [True]
    assert _reads(store).count(HEADS) == 3


def test_a_stale_commit_is_still_refused(store: StoreBase) -> None:
    """A commit built on a version the log has left is refused, the head kept or not."""
    log = SessionLog(store, keep_heads=True)
    assert log.write([_commit("s", 0, "r1")], []) == [True]
    assert log.write([_commit("s", 0, "r2")], []) == [False]
    assert log.write([_commit("s", 1, "r2")], []) == [True]


def test_a_change_by_another_writer_is_seen_by_the_next_commit(store: StoreBase) -> None:
    """Another writer of the same store moves the head on: the kept head is dropped, the
    commit built on the old version is refused, and one on the new version applies."""
    log = SessionLog(store, keep_heads=True)
    assert log.write([_commit("s", 0, "r1")], []) == [True]
    other = SessionLog(store, keep_heads=True)
    assert other.write([_commit("s", 1, "r2")], []) == [True]
    assert log.write([_commit("s", 1, "r3")], []) == [False]
    assert log.write([_commit("s", 2, "r3")], []) == [True]
    # Through the public API too: the head rewound by hand decides the next commit.
    store.put(HEADS, "s", {"version": 7, "base": 0, "results": 3, "agent": "a"})
    assert log.write([_commit("s", 3, "r4")], []) == [False]
    store.delete(HEADS, "s")  # no head: the session is at its snapshot's version (none: 0)
    assert log.write([_commit("s", 0, "r5")], []) == [True]


def test_a_failed_write_drops_the_kept_heads(
    store: StoreBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails leaves the heads as stored: the next commit reads them again."""
    log = SessionLog(store, keep_heads=True)
    assert log.write([_commit("s", 0, "r1")], []) == [True]

    def fail(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store, "_apply", fail)
    with pytest.raises(OSError):
        log.write([_commit("s", 1, "r2")], [])
    monkeypatch.undo()
    _reads(store).clear()
    assert log.write([_commit("s", 2, "r2")], []) == [False]  # the failed one never landed
    assert log.write([_commit("s", 1, "r2")], []) == [True]
    assert HEADS in _reads(store)


def test_the_result_ring_wraps_with_kept_heads(store: StoreBase) -> None:
    """The results kept and the run index stay right over many commits of a warm session."""
    log = SessionLog(store, keep_heads=True)
    runs = RESULTS_KEPT + 5
    for n in range(runs):
        assert log.write([_commit("s", n, f"r{n}")], []) == [True]
    kept = log.results("s")
    assert len(kept) == RESULTS_KEPT and '"r5"' in kept[0] and f'"r{runs - 1}"' in kept[-1]
    assert log.find_run(f"r{runs - 1}") == "s" and log.find_run("r4") is None


def test_equal_kept_heads_are_one_object_and_the_agent_name_is_shared(store: StoreBase) -> None:
    """Sessions whose heads are equal keep one head between them (with one agent name)."""
    log = SessionLog(store, keep_heads=True)
    assert log.write([_commit(f"s{i}", 0, f"r{i}") for i in range(3)], []) == [True] * 3
    kept = log._heads
    assert kept is not None
    assert kept["s0"] == (1, 0, 1, "a")
    assert kept["s0"] is kept["s1"] is kept["s2"]
    assert log.write([_commit("s0", 1, "r9")], []) == [True]
    assert kept["s0"] == (2, 0, 2, "a") and kept["s1"] == (1, 0, 1, "a")
    # Each session's commit decoded its own copy of the name; the kept head holds one for all.
    named = [Commit(f"t{i}", 0, f"q{i}", None, agent="".join(["ag", "ent"])) for i in range(2)]
    assert log.write(named, []) == [True, True]
    assert kept["t0"][3] is kept["t1"][3] == "agent"
