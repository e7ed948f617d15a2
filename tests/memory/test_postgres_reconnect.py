"""PostgresStore outlives its connection: server restarts and dropped connections."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from praxo_actors import PraxoError
from praxo_actors.memory._backoff import Backoff
from praxo_actors.memory._log import Commit, SessionLog
from praxo_actors.testing._postgres import PostgresServer
from supervisors import ManualClock

psycopg = pytest.importorskip("psycopg")

_SCHEMAS = itertools.count(1)


def _terminate(dsn: str, application: str) -> int:
    """Cut every connection of ``application`` from the server side; return how many."""
    with psycopg.connect(dsn, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (application,),
        ).fetchall()
    return len(rows)


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


def test_backoff_tries_at_once_then_doubles_up_to_its_cap() -> None:
    """The first attempt after a loss is immediate; then delays double from ``initial`` to the
    cap, each jittered down by at most half; a success resets them."""
    clock = ManualClock()
    highs = Backoff(0.05, 1.0, monotonic=clock, jitter=lambda: 0.0)
    lows = Backoff(0.05, 1.0, monotonic=clock, jitter=lambda: 0.999999)
    assert highs.remaining() == 0.0
    full = [highs.failed() for _ in range(8)]
    assert full == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0])
    least = [lows.failed() for _ in range(8)]
    assert least == pytest.approx([d / 2 for d in full], rel=1e-5)
    assert highs.remaining() == pytest.approx(1.0)
    clock.advance(0.6)
    assert highs.remaining() == pytest.approx(0.4)
    clock.advance(0.4)
    assert highs.remaining() == 0.0
    highs.succeeded()
    assert highs.failures == 0
    assert highs.failed() == pytest.approx(0.05)


def test_backoff_stays_capped_after_many_failures() -> None:
    """Ten thousand failures in a row still wait at most the cap (no float overflow)."""
    backoff = Backoff(0.05, 2.0, monotonic=ManualClock())
    delays = [backoff.failed() for _ in range(10_000)]
    assert max(delays) <= 2.0
    assert min(delays[-100:]) >= 1.0


def test_backoff_refuses_a_cap_below_its_first_delay() -> None:
    """``maximum < initial`` is a mistake, refused with ``ValueError``."""
    with pytest.raises(ValueError):
        Backoff(1.0, 0.5)


def test_the_first_call_after_a_server_restart_succeeds(store: Any, server: PostgresServer) -> None:
    """A restart cuts the connection; the next read and write reconnect and succeed, and what
    was written before the restart is still there."""
    store.put(("n",), "before", {"v": 1})
    server.restart()
    assert store.get(("n",), "before").value == {"v": 1}
    store.put(("n",), "after", {"v": 2})
    assert [item.key for item in store.search(("n",))] == ["after", "before"]
    assert store.connections == 2


def test_every_call_fails_store_failed_while_the_server_is_down(
    store: Any, server: PostgresServer, clock: ManualClock
) -> None:
    """With the server stopped each kind of call fails ``STORE_FAILED``; between attempts
    none tries to connect; once the server is back and the delay has passed, calls succeed."""
    store.put(("n",), "k", {"v": 1})
    server.stop()
    calls: list[tuple[Any, ...]] = [
        (store.get, ("n",), "k"),
        (store.put, ("n",), "k", {"v": 2}),
        (store.delete, ("n",), "k"),
        (store.search, ("n",)),
        (store.list_namespaces, ()),
        (store.get_many, ("n",), ["k"]),
        (store.put_many, [(("n",), "k", {"v": 3})]),
        (store.apply, [(("n",), "k", {"v": 4})], [(("n",), "gone")]),
    ]
    for call, *args in calls:
        assert _code(call, *args) == "STORE_FAILED"
    # The loss was found, one attempt to reconnect failed, and the rest waited for the delay.
    assert store.connections == 1
    failures = store._backoff.failures
    assert failures == 1
    clock.advance(0.05)
    assert _code(store.get, ("n",), "k") == "STORE_FAILED"
    assert store._backoff.failures == failures + 1
    server.start()
    assert _code(store.get, ("n",), "k") == "STORE_FAILED"  # not due yet: no attempt
    clock.advance(10.0)
    assert store.get(("n",), "k").value == {"v": 1}
    assert store.connections == 2


def test_a_terminated_connection_is_replaced_without_a_failure(
    store: Any, server: PostgresServer
) -> None:
    """``pg_terminate_backend`` of the store's connection: the next calls of every kind reconnect
    and succeed, each time."""
    store.put(("n",), "k", {"v": 1})
    for round_ in range(3):
        assert _terminate(server.dsn, "praxo_test_app") == 1
        store.put_many([(("n",), f"m{round_}", {"v": round_})])
        assert _terminate(server.dsn, "praxo_test_app") == 1
        assert store.get(("n",), f"m{round_}").value == {"v": round_}
    assert store.connections == 7


def test_a_delete_is_not_run_twice_when_its_connection_is_lost(
    store: Any, server: PostgresServer
) -> None:
    """A delete whose connection was lost may have applied: it fails ``STORE_FAILED`` rather
    than run again and answer for a row it may have removed; the next call reconnects."""
    store.put(("n",), "k", {"v": 1})
    _terminate(server.dsn, "praxo_test_app")
    assert _code(store.delete, ("n",), "k") == "STORE_FAILED"
    assert store.delete(("n",), "k") is True


def test_a_session_commit_whose_connection_drops_runs_again_and_applies_once(
    store: Any, server: PostgresServer
) -> None:
    """The connection is cut inside the session log's transaction (advisory lock held, head
    read): the server rolls it back, the commit runs again on a new connection and applies
    exactly once."""
    log = SessionLog(store)
    original = store._read_many
    cuts = []

    def read_then_cut(namespace: Any, keys: Any) -> Any:
        rows = original(namespace, keys)
        if not cuts:
            cuts.append(_terminate(server.dsn, "praxo_test_app"))
        return rows

    store._read_many = read_then_cut
    try:
        assert log.write([Commit("s", expected=0, run_id="r1", record="one")], []) == [True]
    finally:
        del store._read_many
    assert cuts == [1]
    state = log.load(["s"])[0]
    assert state is not None
    assert (state.version, state.records) == (1, ["one"])
    assert log.write([Commit("s", expected=1, run_id="r2", record="two")], []) == [True]
    assert log.load(["s"])[0].records == ["one", "two"]


def test_a_connection_lost_during_commit_is_not_retried(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the connection is lost while ``COMMIT`` is under way the outcome is unknown: the
    commit fails ``STORE_FAILED`` and is not run again (it applied once here, and only once)."""
    log = SessionLog(store)
    exit_ = psycopg.Transaction.__exit__
    calls = []

    def commit_then_lose(self: Any, *exc_info: Any) -> Any:
        result = exit_(self, *exc_info)
        if exc_info[0] is None and not calls:
            calls.append(1)
            self.connection.pgconn.finish()  # the reply never arrives
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return result

    monkeypatch.setattr(psycopg.Transaction, "__exit__", commit_then_lose)
    with pytest.raises(PraxoError) as info:
        log.write([Commit("s", expected=0, run_id="r1", record="one")], [])
    monkeypatch.undo()
    assert info.value.code == "STORE_FAILED"
    assert "may or may not" in info.value.message
    assert calls == [1]
    state = log.load(["s"])[0]
    assert state is not None
    assert (state.version, state.records) == (1, ["one"])


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
