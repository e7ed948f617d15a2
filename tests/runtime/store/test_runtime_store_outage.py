"""A runtime on PostgreSQL rides out its database: a restart or cut connections under load."""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, echo_agent

from praxo_actors import PraxoError
from praxo_actors.memory._log import SessionLog
from praxo_actors.runtime import Runtime, read_session
from praxo_actors.testing._postgres import PostgresServer
from supervisors import ManualClock

psycopg = pytest.importorskip("psycopg")

SESSIONS = 6
"""Sessions running at once, each from a client thread of its own."""

_SCHEMAS = itertools.count(1)
_APP = "praxo_test_outage"


def _terminate(dsn: str) -> int:
    """Cut every connection of the store under test from the server side, waiting until each
    backend has exited; return how many there were."""
    with psycopg.connect(dsn, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
            "WHERE application_name = %s",
            (_APP,),
        ).fetchall()
    assert all(ended for (ended,) in rows)
    return len(rows)


class Load:
    """Client threads, one per session, each running runs one after another until stopped.

    Every run's input is unique (``"<session>-<n>"``); each outcome is kept in order as
    ``(input, None)`` for a success or ``(input, code)`` for a failure with a code.
    """

    def __init__(self, rt: Runtime, sessions: int) -> None:
        self.rt = rt
        self.ids = [f"s{i}" for i in range(sessions)]
        self.outcomes: dict[str, list[tuple[str, str | None]]] = {sid: [] for sid in self.ids}
        self.raw: list[BaseException] = []  # anything that was not a PraxoError
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._client, args=(sid,)) for sid in self.ids]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(TIMEOUT * 3)
        assert not any(thread.is_alive() for thread in self._threads)

    def _client(self, sid: str) -> None:
        handle = self.rt.session(sid)
        for n in itertools.count():
            if self._stop.is_set():
                return
            text = f"{sid}-{n}"
            outcome: str | None = None
            try:
                result = handle.run(text).get(timeout=TIMEOUT)
                assert result.output == text
            except PraxoError as exc:
                outcome = exc.code
            except BaseException as exc:  # reported by the test
                self.raw.append(exc)
                outcome = "RAW"
            with self._changed:
                self.outcomes[sid].append((text, outcome))
                self._changed.notify_all()

    def mark(self) -> dict[str, int]:
        """Return how many outcomes each session has so far."""
        with self._changed:
            return {sid: len(found) for sid, found in self.outcomes.items()}

    def wait(self, condition: Callable[[], bool], what: str) -> None:
        """Wait until ``condition`` (called with the outcomes locked) holds."""
        with self._changed:
            if not self._changed.wait_for(condition, TIMEOUT * 3):
                pytest.fail(f"{what}: not within {TIMEOUT * 3} s; outcomes {self.counts()}")

    def successes_since(self, mark: dict[str, int], n: int) -> Callable[[], bool]:
        """A condition: every session has ``n`` successes after ``mark``."""
        return lambda: all(
            sum(code is None for _, code in self.outcomes[sid][mark[sid] :]) >= n
            for sid in self.ids
        )

    def failures_since(self, mark: dict[str, int], n: int) -> Callable[[], bool]:
        """A condition: ``n`` runs, over all sessions, failed after ``mark``."""
        return lambda: (
            sum(code is not None for sid in self.ids for _, code in self.outcomes[sid][mark[sid] :])
            >= n
        )

    def counts(self) -> Counter[str | None]:
        """Return how many runs ended each way (None: succeeded)."""
        return Counter(code for found in self.outcomes.values() for _, code in found)


@pytest.fixture
def store(restartable_postgres: PostgresServer) -> Iterator[tuple[Any, ManualClock]]:
    """A PostgresStore on the restartable server, and the clock of its reconnection delays."""
    from praxo_actors.memory import PostgresStore

    clock = ManualClock()
    opened = PostgresStore(
        f"{restartable_postgres.dsn} application_name={_APP}",
        schema=f"praxo_test_outage_{next(_SCHEMAS)}",
        monotonic=clock,
    )
    yield opened, clock
    opened.close()


def _check_log(store: Any, load: Load) -> None:
    """Every succeeded run is in its session's log exactly once, a failed one at most once,
    and the log holds one record per run in it, in submission order."""
    for sid in load.ids:
        users = [m.content for m in read_session(store, sid).messages if m.role == "user"]
        assert len(users) == len(set(users)), f"{sid}: a run committed twice"
        succeeded = [text for text, code in load.outcomes[sid] if code is None]
        assert set(succeeded) <= set(users), f"{sid}: an acknowledged run is missing"
        order = [text for text, _ in load.outcomes[sid]]
        assert users == [text for text in order if text in set(users)]  # submission order
        state = SessionLog(store).load([sid])[0]
        assert state is not None
        assert state.version == len(users)


def test_runs_fail_with_a_code_while_postgres_restarts_and_succeed_after(
    runtime: Callable[..., Runtime],
    restartable_postgres: PostgresServer,
    store: tuple[Any, ManualClock],
) -> None:
    """Six sessions run runs back to back while the server is stopped and started: every run
    succeeds (then it is in the log, exactly once) or fails with a code, ``STORE_FAILED``
    among them, and runs succeed again in the same runtime once the server is back."""
    pg, clock = store
    rt = runtime(store=pg, agents={"default": echo_agent})
    with Load(rt, SESSIONS) as load:
        load.wait(load.successes_since(load.mark(), 3), "runs before the outage")
        restartable_postgres.stop()
        load.wait(load.failures_since(load.mark(), 2 * SESSIONS), "runs failing in the outage")
        restartable_postgres.start()
        clock.advance(60.0)  # past any reconnection delay: the next call reconnects
        load.wait(load.successes_since(load.mark(), 3), "runs after the outage")
    assert load.raw == []
    counts = load.counts()
    assert counts["STORE_FAILED"] >= 2 * SESSIONS
    assert set(counts) <= {None, "STORE_FAILED"}, counts
    assert pg.connections >= 2
    _check_log(pg, load)


def test_runs_survive_their_connection_being_cut(
    runtime: Callable[..., Runtime],
    restartable_postgres: PostgresServer,
    store: tuple[Any, ManualClock],
) -> None:
    """``pg_terminate_backend`` of the store's connection costs no run, between runs or under
    load: the store finds the connection closed, or settles a commit it cut with the server,
    and every run succeeds, in the log exactly once."""
    pg, _clock = store
    rt = runtime(store=pg, agents={"default": echo_agent})
    handle = rt.session("alone")
    for n in range(3):
        assert handle.run(f"before-{n}").get(timeout=TIMEOUT).output == f"before-{n}"
        assert _terminate(restartable_postgres.dsn) == 1
        assert handle.run(f"after-{n}").get(timeout=TIMEOUT).output == f"after-{n}"
    with Load(rt, SESSIONS) as load:
        for _ in range(5):
            load.wait(load.successes_since(load.mark(), 2), "runs between cuts")
            assert _terminate(restartable_postgres.dsn) == 1
        load.wait(load.successes_since(load.mark(), 2), "runs after the last cut")
    assert load.raw == []
    assert set(load.counts()) == {None}, load.counts()
    assert pg.connections == 9
    _check_log(pg, load)
