"""PostgresStore as the store of the session log: versioned commits hold across connections."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from praxo_actors.core._log_docs import dump_record
from praxo_actors.memory._log import Commit, SessionLog
from praxo_actors.models import message_assistant, message_user

_SCHEMAS = itertools.count(1)


@pytest.fixture
def hosts(postgres_dsn: str) -> Iterator[list[Any]]:
    """Two stores on one schema, as two hosts sharing one database."""
    from praxo_actors.memory import PostgresStore

    schema = f"praxo_test_log_{next(_SCHEMAS)}"
    stores = [PostgresStore(postgres_dsn, schema=schema) for _ in range(2)]
    yield stores
    for store in stores:
        store.close()


def test_racing_hosts_never_commit_on_the_same_version(hosts: list[Any]) -> None:
    """Each host reads the head, builds a record on it and commits; of every race exactly one
    wins, and the log ends with one record per won commit, in order, none overwritten."""
    logs = [SessionLog(store) for store in hosts]
    won: list[list[int]] = [[], []]
    barrier = threading.Barrier(2, timeout=30)

    def host(i: int) -> None:
        for _ in range(40):
            state = logs[i].load(["s"])[0]
            version = 0 if state is None else state.version
            record = dump_record(
                "s", version + 1, f"h{i}-{version}", [message_user(f"h{i}"), message_assistant("a")]
            )
            barrier.wait()  # both build on the same version, then race
            commit = Commit("s", expected=version, run_id=f"h{i}-{version}", record=record)
            if logs[i].write([commit], []) == [True]:
                won[i].append(version + 1)

    threads = [threading.Thread(target=host, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive()
    final = logs[0].load(["s"])[0]
    assert final is not None
    wins = sorted(won[0] + won[1])
    assert wins == list(range(1, final.version + 1))  # no version committed twice
    assert final.version == 40  # every race has exactly one winner
    assert len(final.records) == final.version - final.base


def test_a_runtime_on_postgres_restores_and_resumes(postgres_dsn: str) -> None:
    from praxo_actors.agent import new_agent_options
    from praxo_actors.memory import PostgresStore
    from praxo_actors.runtime import Runtime, read_session
    from praxo_actors.testing import EchoModel

    store = PostgresStore(postgres_dsn, schema=f"praxo_test_rt_{next(_SCHEMAS)}")
    try:
        with Runtime.start(store, idle_timeout=None, timeout=30) as rt:
            rt.register_agent("default", lambda: new_agent_options(EchoModel()))
            handle = rt.session("s")
            for text in ("one", "two"):
                assert handle.run(text).get(timeout=30).output == text
            assert handle.passivate()
            assert [m.content for m in handle.history()] == ["one", "one", "two", "two"]
            assert handle.run("three").get(timeout=30).output == "three"
        assert len(read_session(store, "s").messages) == 6
    finally:
        store.close()


def test_many_stores_opened_at_once_on_a_new_schema(postgres_dsn: str) -> None:
    """Hosts starting together each create the schema and table if missing: every one opens,
    and they all see one table."""
    from praxo_actors.memory import PostgresStore

    schema = f"praxo_test_open_{next(_SCHEMAS)}"
    barrier = threading.Barrier(8, timeout=30)
    opened: list[Any] = []
    failed: list[Exception] = []

    def host(i: int) -> None:
        barrier.wait()
        try:
            store = PostgresStore(postgres_dsn, schema=schema)
        except Exception as exc:  # the assertion below reports it
            failed.append(exc)
            return
        store.put(("n",), f"k{i}", {"i": i})
        opened.append(store)

    threads = [threading.Thread(target=host, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive()
    try:
        assert failed == []
        assert len(opened) == 8
        keys = sorted(item.key for item in opened[0].search(("n",), limit=100))
        assert keys == sorted(f"k{i}" for i in range(8))
    finally:
        for store in opened:
            store.close()


def test_a_load_sees_one_version_while_another_host_commits(hosts: list[Any]) -> None:
    """A commit that lands between the reads of one load (a new snapshot dropping the records
    the load is about to read) is either all seen or not at all: the load's state revives."""
    from praxo_actors.core._log_docs import dump_snapshot
    from praxo_actors.models import Session
    from praxo_actors.runtime._session._restore import revive

    writer, reader = SessionLog(hosts[0]), hosts[1]

    def commit(version: int, snapshot: bool) -> None:
        messages = [message_user(f"u{version}"), message_assistant(f"a{version}")]
        record = dump_record("s", version, f"r{version}", messages)
        history = [
            m
            for v in range(1, version + 1)
            for m in (message_user(f"u{v}"), message_assistant(f"a{v}"))
        ]
        snap = dump_snapshot(Session("s", history), version, None) if snapshot else None
        applied = writer.write([Commit("s", version - 1, f"r{version}", record, snap)], [])
        assert applied == [True]

    for version in (1, 2):
        commit(version, snapshot=False)
    reads: list[tuple[str, ...]] = []
    original = reader._read_many

    def read_many(namespace: tuple[str, ...], keys: list[str]) -> list[Any]:
        rows = original(namespace, keys)
        reads.append(namespace)
        if len(reads) == 1:  # after the snapshot's read, before the head's: another host commits
            commit(3, snapshot=True)
        return rows

    reader._read_many = read_many  # type: ignore[method-assign]
    state = SessionLog(reader).load(["s"])[0]
    session, position = revive(state, "s", ("message", "session", "text", "tool_call"), None)
    assert position.version in (2, 3)
    assert [m.content for m in session.messages][-1] == f"a{position.version}"


def test_a_runtime_writer_on_a_shared_database_checks_the_version_there(
    hosts: list[Any],
) -> None:
    """A writer that keeps heads on other stores keeps none on a database shared by hosts: a
    commit built on the version it wrote last is refused once another host moved the log on."""
    first, second = (SessionLog(store, keep_heads=True) for store in hosts)

    def commit(version: int, run: str) -> Commit:
        record = dump_record("s", version + 1, run, [message_user(run), message_assistant("a")])
        return Commit("s", expected=version, run_id=run, record=record)

    assert first.write([commit(0, "a1")], []) == [True]
    assert second.write([commit(1, "b2")], []) == [True]
    assert first.write([commit(1, "a2")], []) == [False]  # the other host's commit is seen
    assert first.write([commit(2, "a3")], []) == [True]
    state = second.load(["s"])[0]
    assert state is not None and state.version == 3
