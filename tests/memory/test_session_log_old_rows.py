"""A session log written in the previous stored form (each record and result wrapped in a
document of its own) is still read, and goes on in the current form."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from praxo_actors.agent import new_agent_options
from praxo_actors.core import encode_json
from praxo_actors.core._log_docs import dump_record
from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.memory._base import StoreBase
from praxo_actors.memory._log import (
    HEADS,
    RECORDS,
    RESULTS,
    RESULTS_KEPT,
    Commit,
    SessionLog,
)
from praxo_actors.memory._runs import RUNS
from praxo_actors.models import Request, Response, message_assistant, message_user
from praxo_actors.runtime import Runtime, read_session

TIMEOUT = 10.0


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreBase]:
    """An in-memory store or a SQLite one, closed after the test."""
    made: StoreBase = (
        InMemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "log.db")
    )
    with made:
        yield made


def _result(run_id: str, output: str) -> str:
    fields = {"run_id": run_id, "output": output, "structured": None, "steps": 1}
    return encode_json({**fields, "model_calls": 1, "tool_calls": 0, "usage": {}})


def write_old_log(store: StoreBase, sid: str, inputs: list[str], first_result: int = 0) -> None:
    """Write ``sid``'s log as the previous form did: every record and result wrapped in a
    document (``{"record": text}``, ``{"result": text}``), the head and run index beside."""
    for n, text in enumerate(inputs, 1):
        run_id = f"{sid}-r{n}"
        messages = [message_user(text), message_assistant(text.upper())]
        store.put(RECORDS, f"{sid}#{n}", {"record": dump_record(sid, n, run_id, messages)})
        slot = (first_result + n - 1) % RESULTS_KEPT
        store.put(RESULTS, f"{sid}#{slot}", {"result": _result(run_id, text.upper())})
        store.put(RUNS, run_id, {"n": first_result + n - 1, "session": sid})
    head = {"version": len(inputs), "base": 0, "results": first_result + len(inputs)}
    store.put(HEADS, sid, {**head, "agent": "default"})


def test_an_old_log_reads_back_whole(store: StoreBase) -> None:
    """Records, results, head and run index in the old form give the session and its results."""
    write_old_log(store, "s", ["a", "b"])
    log = SessionLog(store)
    [state] = log.load(["s"])
    assert state is not None and state.version == 2 and state.results == 2
    assert state.agent == "default" and len(state.records) == 2
    assert state.records[0].startswith('{"format":"praxo.record"')
    messages = read_session(store, "s").messages
    assert [m.content for m in messages] == ["a", "A", "b", "B"]
    assert log.results("s") == [_result("s-r1", "A"), _result("s-r2", "B")]
    assert log.find_run("s-r2") == "s"


def test_a_commit_goes_on_from_an_old_log_in_the_new_form(store: StoreBase) -> None:
    """A commit on top of an old log applies at its version and stores its documents as they
    are; the log then reads both forms in order."""
    write_old_log(store, "s", ["a", "b"])
    log = SessionLog(store)
    record = dump_record("s", 3, "s-r3", [message_user("c"), message_assistant("C")])
    result = _result("s-r3", "C")
    assert log.write([Commit("s", 1, "s-r3", record, result=result)], []) == [False]
    assert log.write([Commit("s", 2, "s-r3", record, result=result)], []) == [True]
    assert store._read_texts(RECORDS, ["s#3"]) == [record]
    assert store._read_texts(RESULTS, ["s#2"]) == [result]
    assert [m.content for m in read_session(store, "s").messages] == ["a", "A", "b", "B", "c", "C"]
    assert log.results("s")[-2:] == [_result("s-r2", "B"), result]
    assert log.find_run("s-r3") == "s"


def test_a_full_ring_of_old_results_drops_the_index_row_it_overwrites(store: StoreBase) -> None:
    """The result a commit overwrites is read in the old form for its run id: its index row
    goes, so the index holds one row per kept result."""
    write_old_log(store, "s", ["a"], first_result=RESULTS_KEPT - 1)
    log = SessionLog(store)
    assert log.find_run("s-r1") == "s"
    record = dump_record("s", 2, "new", [message_user("n")])
    assert log.write([Commit("s", 1, "new", record, result=_result("new", ""))], []) == [True]
    assert log.find_run("new") == "s"
    assert log.find_run("s-r1") == "s"  # result 99, in the old form, is still in slot 99
    for n in range(RESULTS_KEPT - 1):  # results 101-199: the last one overwrites slot 99
        log.write([Commit("s", result=_result(f"x{n}", ""), kept=f"x{n}")], [])
    assert log.find_run("s-r1") is None  # its slot was overwritten: the old row went with it
    assert log.find_run("x0") == "s"


def _echo(request: Request) -> Response:
    return Response(message_assistant(str(request.messages[-1].content).upper()))


def test_a_runtime_restores_a_sqlite_log_written_in_the_old_form(tmp_path: Path) -> None:
    """A runtime over a store written in the old form restores the session, answers a kept
    result by run id, and commits the next run after it."""
    path = tmp_path / "old.db"
    with SQLiteStore(path) as old:
        write_old_log(old, "s", ["a", "b"])
    with SQLiteStore(path) as store:
        with Runtime.start(store=store, idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", lambda: new_agent_options(_echo))
            handle = rt.session("s")
            assert [m.content for m in handle.history()] == ["a", "A", "b", "B"]
            assert rt.result("s-r2", timeout=TIMEOUT).output == "B"
            assert handle.run("c").get(timeout=TIMEOUT).output == "C"
        contents = [m.content for m in read_session(store, "s").messages]
        assert contents == ["a", "A", "b", "B", "c", "C"]
        [state] = SessionLog(store).load(["s"])
        assert state is not None and state.version == 3 and state.results == 3


def test_postgres_reads_an_old_log_and_goes_on_in_the_new_form(postgres_dsn: str) -> None:
    """On PostgreSQL too: an old log reads back, and a commit on it stores its documents as
    they are, in the session's transaction."""
    from praxo_actors.memory import PostgresStore

    with PostgresStore(postgres_dsn, schema="praxo_test_old_rows") as store:
        write_old_log(store, "s", ["a", "b"])
        log = SessionLog(store)
        record = dump_record("s", 3, "s-r3", [message_user("c"), message_assistant("C")])
        assert log.write([Commit("s", 2, "s-r3", record, result=_result("s-r3", "C"))], []) == [
            True
        ]
        assert store._read_texts(RECORDS, ["s#3"]) == [record]
        contents = [m.content for m in read_session(store, "s").messages]
        assert contents == ["a", "A", "b", "B", "c", "C"]
        assert log.results("s")[-1] == _result("s-r3", "C") and log.find_run("s-r1") == "s"
