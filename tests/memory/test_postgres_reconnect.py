"""PostgresStore outlives its connection: server restarts and dropped connections."""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from praxo_actors import PraxoError
from praxo_actors.memory._log import Commit, SessionLog
from praxo_actors.testing._eventually import eventually
from praxo_actors.testing._postgres import PostgresServer
from supervisors import ManualClock

psycopg = pytest.importorskip("psycopg")

_SCHEMAS = itertools.count(1)


def _terminate(dsn: str, application: str) -> int:
    """Cut every connection of ``application`` from the server side, waiting until each
    backend has exited; return how many there were."""
    with psycopg.connect(dsn, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
            "WHERE application_name = %s",
            (application,),
        ).fetchall()
    assert all(ended for (ended,) in rows)
    return len(rows)


def _lose_reply(monkeypatch: pytest.MonkeyPatch, prefix: str, *, applied: bool) -> list[str]:
    """Make the first statement starting with ``prefix`` lose its connection — after the
    server ran it (``applied``) or before it was sent; return the statements so cut."""
    execute = psycopg.Connection.execute
    cut: list[str] = []

    def losing(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        if cut or not str(query).lstrip().startswith(prefix):
            return execute(self, query, *args, **kwargs)
        cut.append(str(query))
        if applied:
            execute(self, query, *args, **kwargs)
        self.pgconn.finish()  # the reply, if any, never arrives
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(psycopg.Connection, "execute", losing)
    return cut


@pytest.fixture
def server(restartable_postgres: PostgresServer) -> PostgresServer:
    """The restartable server (running again, its test schemas dropped, after the test)."""
    return restartable_postgres


@pytest.fixture
def clock() -> ManualClock:
    """The clock the store's reconnection delays are measured on."""
    return ManualClock()


@pytest.fixture
def store(server: PostgresServer, clock: ManualClock) -> Iterator[Any]:
    """A store on the restartable server, named ``praxo_test_app`` in ``pg_stat_activity``."""
    from praxo_actors.memory import PostgresStore

    opened = PostgresStore(
        f"{server.dsn} application_name=praxo_test_app",
        schema=f"praxo_test_rc_{next(_SCHEMAS)}",
        monotonic=clock,
    )
    yield opened
    opened.close()


def _code(call: Any, *args: Any) -> str:
    with pytest.raises(PraxoError) as info:
        call(*args)
    return info.value.code


def _message(call: Any, *args: Any) -> str:
    with pytest.raises(PraxoError) as info:
        call(*args)
    assert info.value.code == "STORE_FAILED"
    return info.value.message


def test_the_first_call_after_a_server_restart_succeeds(store: Any, server: PostgresServer) -> None:
    """A restart closes the connection; the next calls of every kind — a delete and a put,
    which are never run twice, among them — find it closed, reconnect and succeed, and what
    was written before the restart is still there."""
    store.put(("n",), "before", {"v": 1})
    store.put(("n",), "gone", {"v": 0})
    server.restart()
    assert store.delete(("n",), "gone") is True
    server.restart()
    store.put(("n",), "after", {"v": 2})
    server.restart()
    assert store.get(("n",), "before").value == {"v": 1}
    assert [item.key for item in store.search(("n",))] == ["after", "before"]
    assert store.connections == 4


def test_every_call_fails_store_failed_while_the_server_is_down(
    store: Any, server: PostgresServer, clock: ManualClock
) -> None:
    """With the server stopped each kind of call fails ``STORE_FAILED``: the first tries to
    connect, the rest do not until the delay has passed; once the server is back and the
    delay has passed, calls succeed on one new connection."""
    store.put(("n",), "k", {"v": 1})
    server.stop()
    assert "cannot connect" in _message(store.get, ("n",), "k")
    calls: list[tuple[Any, ...]] = [
        (store.get, ("n",), "k"),
        (store.put, ("n",), "k", {"v": 2}),
        (store.delete, ("n",), "k"),
        (store.search, ("n",)),
        (store.list_namespaces, ()),
        (store.get_many, ("n",), ["k"]),
        (store.put_many, [(("n",), "k", {"v": 3})]),
        (store.apply, [(("n",), "k", {"v": 4})], [(("n",), "gone")]),
        (SessionLog(store).write, [Commit("s", expected=0, run_id="r", record="x")], []),
        (SessionLog(store).load, ["s"]),
    ]
    for call, *args in calls:
        assert "the next attempt is due" in _message(call, *args)
    clock.advance(0.05)  # the first delay is at most 0.05 s
    assert "cannot connect" in _message(store.get, ("n",), "k")
    server.start()
    assert "the next attempt is due" in _message(store.get, ("n",), "k")
    clock.advance(10.0)
    assert store.get(("n",), "k").value == {"v": 1}
    assert store.connections == 2


def test_a_terminated_connection_is_replaced_without_a_failure(
    store: Any, server: PostgresServer
) -> None:
    """``pg_terminate_backend`` of the store's connection: the next call of each kind
    reconnects and succeeds."""
    store.put(("n",), "k", {"v": 1})
    log = SessionLog(store)
    steps: list[tuple[Any, ...]] = [
        (store.put, ("n",), "p", {"v": 2}),
        (store.delete, ("n",), "p"),
        (store.put_many, [(("n",), "m", {"v": 3})]),
        (store.get, ("n",), "m"),
        (store.search, ("n",)),
        (log.write, [Commit("s", expected=0, run_id="r", record="x")], []),
        (log.load, ["s"]),
    ]
    for call, *args in steps:
        assert _terminate(server.dsn, "praxo_test_app") == 1
        call(*args)
    assert [item.key for item in store.search(("n",))] == ["k", "m"]
    assert log.load(["s"])[0].records == ["x"]
    assert store.connections == 1 + len(steps)


@pytest.mark.parametrize("call", ["put", "delete"])
def test_a_write_whose_reply_is_lost_is_not_run_again(
    store: Any, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    """A put or delete that the server ran but whose reply was lost fails ``STORE_FAILED``
    and is not run again (it could undo another client's write made meanwhile); the next
    call reconnects."""
    store.put(("n",), "k", {"v": 1})
    cut = _lose_reply(monkeypatch, "INSERT" if call == "put" else "DELETE", applied=True)
    if call == "put":
        assert _code(store.put, ("n",), "k", {"v": 2}) == "STORE_FAILED"
    else:
        assert _code(store.delete, ("n",), "k") == "STORE_FAILED"
    assert len(cut) == 1
    monkeypatch.undo()
    item = store.get(("n",), "k")
    assert (item is None) if call == "delete" else (item.value == {"v": 2})
    assert store.connections == 2


def test_a_read_cut_in_flight_runs_again(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read whose connection is lost runs again on a new one and answers."""
    store.put(("n",), "k", {"v": 1})
    cut = _lose_reply(monkeypatch, "SELECT value", applied=False)
    assert store.get(("n",), "k").value == {"v": 1}
    assert len(cut) == 1
    assert store.connections == 2


def test_a_session_commit_cut_before_commit_runs_again_and_applies_once(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection is lost inside the session log's transaction (lock held, reading the
    heads): the server rolls it back, the commit runs again on a new connection and applies
    once."""
    log = SessionLog(store)
    cut = _lose_reply(monkeypatch, "SELECT key", applied=False)
    assert log.write([Commit("s", expected=0, run_id="r1", record="one")], []) == [True]
    assert len(cut) == 1
    monkeypatch.undo()
    state = log.load(["s"])[0]
    assert state is not None
    assert (state.version, state.records) == (1, ["one"])
    assert log.write([Commit("s", expected=1, run_id="r2", record="two")], []) == [True]
    assert log.load(["s"])[0].records == ["one", "two"]


def _waiting_for_a_lock(dsn: str) -> Callable[[], bool]:
    def waiting() -> bool:
        with psycopg.connect(dsn, autocommit=True) as admin:
            row = admin.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).fetchone()
        return bool(row and row[0])

    return waiting


@pytest.mark.parametrize("ending", ["committed", "rolled back", "rolled back later"])
def test_a_session_commit_cut_during_commit_is_settled_by_the_server(
    store: Any, server: PostgresServer, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    """The connection is lost while ``COMMIT`` is under way: the store asks the server how the
    transaction ended — waiting for its end when its backend still holds it open. Committed,
    the write reports its result without running again; rolled back, it runs again. Either
    way the commit is in the log exactly once."""
    log = SessionLog(store)
    exit_ = psycopg.Transaction.__exit__
    kept: list[int] = []  # a copy of the lost connection's socket, keeping it open
    cut: list[int] = []

    def lose_at_commit(self: Any, *exc_info: Any) -> Any:
        if exc_info[0] is not None or cut:
            return exit_(self, *exc_info)
        pid = self.connection.info.backend_pid
        cut.append(pid)
        if ending == "committed":
            exit_(self, *exc_info)
        elif ending == "rolled back later":
            # Keep the server's end open (and libpq's goodbye unsent): the transaction stays.
            sock = self.connection.pgconn.socket
            kept.append(os.dup(sock))
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, sock)
            os.close(null)
        self.connection.pgconn.finish()  # the reply never arrives
        if ending == "rolled back":  # the server rolled back, and its backend has ended
            with psycopg.connect(server.dsn, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(psycopg.Transaction, "__exit__", lose_at_commit)
    writes = []
    original = log._write

    def counting(*args: Any) -> Any:
        writes.append(1)
        return original(*args)

    monkeypatch.setattr(log, "_write", counting)
    ender: threading.Thread | None = None
    if ending == "rolled back later":

        def end_it() -> None:
            eventually(_waiting_for_a_lock(server.dsn), timeout=30.0)
            os.close(kept[0])  # now the server sees the connection gone, and rolls back

        ender = threading.Thread(target=end_it)
        ender.start()
    try:
        assert log.write([Commit("s", expected=0, run_id="r1", record="one")], []) == [True]
    finally:
        if ender is not None:
            ender.join(30)
        for fd in kept:
            with contextlib.suppress(OSError):
                os.close(fd)
    monkeypatch.undo()
    assert len(cut) == 1
    assert len(writes) == (1 if ending == "committed" else 2)
    state = log.load(["s"])[0]
    assert state is not None
    assert (state.version, state.records) == (1, ["one"])


def test_a_commit_cut_during_commit_without_a_transaction_id_fails(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain ``apply`` has no transaction id to settle by: a connection lost during its
    ``COMMIT`` fails ``STORE_FAILED`` saying the outcome is unknown, and is not run again."""
    exit_ = psycopg.Transaction.__exit__
    cut: list[int] = []

    def lose_at_commit(self: Any, *exc_info: Any) -> Any:
        result = exit_(self, *exc_info)
        if exc_info[0] is None and not cut:
            cut.append(1)
            self.connection.pgconn.finish()
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return result

    monkeypatch.setattr(psycopg.Transaction, "__exit__", lose_at_commit)
    assert "may or may not" in _message(store.apply, [(("n",), "k", {"v": 1})])
    monkeypatch.undo()
    assert cut == [1]
    assert store.get(("n",), "k").value == {"v": 1}


def test_opening_a_store_on_an_unreachable_server_fails_store_failed(
    server: PostgresServer,
) -> None:
    """No server behind the DSN, or a DSN that is not one: ``STORE_FAILED``, not psycopg's
    error."""
    from praxo_actors.memory import PostgresStore

    server.stop()
    assert _code(PostgresStore, server.dsn) == "STORE_FAILED"
    assert _code(PostgresStore, "host=127.0.0.1 port=notaport") == "STORE_FAILED"
    assert _code(PostgresStore, "this is = not a dsn =") == "STORE_FAILED"
