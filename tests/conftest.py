"""Fixtures shared by every test folder: scripted models, an event sink, a thread-leak check."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest
from _helpers import Events, Scripted, assert_no_new_threads
from hypothesis import settings

from praxo_actors.actors import _checks

if TYPE_CHECKING:
    from praxo_actors.testing._postgres import PostgresServer

# In CI the property tests run a fixed sequence of examples, so a green run is reproducible;
# locally they draw new examples each time, to keep finding new inputs. Neither has
# Hypothesis's per-example deadline (200 ms): on a machine whose cores are busy that is a
# wall-time assertion, failing examples that are merely slow.
settings.register_profile("local", deadline=None)
settings.register_profile("ci", derandomize=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "local")

# The debug checks (the kernel's thread ownership, the loop scheduler's state after each drain)
# are on for every test, and in every process a test starts.
os.environ["PRAXO_DEBUG_CHECKS"] = "1"
_checks.enable()


@pytest.fixture(autouse=True)
def _debug_checks() -> Iterator[None]:
    """Fail the test during which an ownership rule or a scheduler invariant was broken."""
    _checks.take_violations()
    yield
    broken = _checks.take_violations()
    if broken:
        pytest.fail(f"debug checks failed: {broken[:5]}", pytrace=False)


@pytest.fixture
def scripted() -> Callable[..., Scripted]:
    """Return a factory of scripted models."""
    return lambda *replies: Scripted(replies)


@pytest.fixture
def events() -> Events:
    """Return a fresh event-collecting sink."""
    return Events()


@pytest.fixture
def no_thread_leaks() -> Iterator[None]:
    """Check that the test, with the fixtures set up after this one, leaves no thread running."""
    before = set(threading.enumerate())
    yield
    assert_no_new_threads(before)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server for this test session: ``PRAXO_POSTGRES_DSN``, or one started on
    loopback from the local binaries (skipped when neither is there)."""
    dsn = os.environ.get("PRAXO_POSTGRES_DSN")
    if dsn:
        yield dsn
        return
    from praxo_actors.testing._postgres import local_postgres, postgres_binaries

    if postgres_binaries() is None:
        pytest.skip("no PostgreSQL server binaries (Debian: apt-get install postgresql)")
    with local_postgres() as started:
        yield started


@pytest.fixture
def postgres_dsn(postgres_server: str) -> Iterator[str]:
    """The server's DSN, with the schema each test's stores use dropped afterwards."""
    yield postgres_server
    import psycopg

    with psycopg.connect(postgres_server, autocommit=True) as conn:
        for (schema,) in conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'praxo_test_%'"
        ).fetchall():
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(scope="session")
def _restartable_postgres() -> Iterator[PostgresServer]:
    """A server of its own for tests that stop and start it (the shared one stays up)."""
    from praxo_actors.testing._postgres import postgres_binaries, postgres_server

    if postgres_binaries() is None:
        pytest.skip("no PostgreSQL server binaries (Debian: apt-get install postgresql)")
    with postgres_server() as started:
        yield started


@pytest.fixture
def restartable_postgres(_restartable_postgres: PostgresServer) -> Iterator[PostgresServer]:
    """That server, running; after the test it runs again (whatever the test stopped) and the
    schemas the test's stores made (``praxo_test_*``) are dropped."""
    server = _restartable_postgres
    if not server.running:
        server.start()
    yield server
    if not server.running:
        server.start()
    import psycopg

    with psycopg.connect(server.dsn, autocommit=True) as conn:
        for (schema,) in conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'praxo_test_%'"
        ).fetchall():
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
