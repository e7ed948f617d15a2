"""The throwaway PostgreSQL server of the tests: it restarts on its port and keeps its data."""

from __future__ import annotations

from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg")

from praxo_actors.testing._postgres import LocalPostgres, postgres_binaries  # noqa: E402

pytestmark = pytest.mark.skipif(postgres_binaries() is None, reason="no PostgreSQL binaries")


def test_a_restart_cuts_connections_and_keeps_the_data() -> None:
    """After restart() the old connection fails, a new one on the same DSN sees the data."""
    with LocalPostgres() as server:
        conn = psycopg.connect(server.dsn, autocommit=True)
        try:
            conn.execute("CREATE TABLE kept (v int)")
            conn.execute("INSERT INTO kept VALUES (7)")
            server.restart()
            with pytest.raises(psycopg.OperationalError):
                conn.execute("SELECT 1")
        finally:
            conn.close()
        with psycopg.connect(server.dsn) as again:
            assert again.execute("SELECT v FROM kept").fetchall() == [(7,)]


def test_a_stopped_server_refuses_and_close_removes_its_files() -> None:
    """Stopped, the server refuses connections; closed, its directory is gone."""
    server = LocalPostgres()
    try:
        server.start()
        root = Path(server._root)
        assert root.exists()
        server.stop()
        assert not server.running
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(server.dsn, connect_timeout=5).close()
    finally:
        server.close()
    assert not root.exists()
