"""ClusterRuntime over a PostgreSQL server that restarts: every host serves again."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from praxo_actors import PraxoError
from praxo_actors.cluster import ClusterRuntime
from praxo_actors.testing._eventually import eventually
from praxo_actors.testing._postgres import PostgresServer

ray = pytest.importorskip("ray")
TIMEOUT = 120.0
_SCHEMAS = itertools.count(1)


def _one_session_per_host(cluster: Any, hosts: int) -> dict[str, str]:
    """Return a session id routed to each host, by host."""
    found: dict[str, str] = {}
    for i in itertools.count():
        found.setdefault(cluster.host_of(f"r{i}"), f"r{i}")
        if len(found) == hosts:
            return found
    raise AssertionError("unreachable")


def _history(cluster: Any, sid: str) -> list[Any]:
    """Return the session's history once its host reconnects (within the reconnection delay
    of a failed attempt, its reads still fail ``STORE_FAILED``)."""

    def read() -> tuple[list[Any]] | None:
        try:
            return (list(cluster.session(sid).history(TIMEOUT)),)
        except PraxoError as exc:
            if exc.code != "STORE_FAILED":
                raise
            return None

    return eventually(read, interval=0.05, what=f"the history of {sid}")[0]


def test_every_host_serves_again_after_postgres_restarts(
    ray_cluster: Any, restartable_postgres: PostgresServer
) -> None:
    """After the server restarts, the first run on each host succeeds (each host's store
    finds its connection closed and opens a new one), in the same cluster; a run during the
    outage fails with a code; nothing committed before is lost."""
    schema = f"praxo_test_cluster_rs_{next(_SCHEMAS)}"
    cluster = ClusterRuntime.start(
        restartable_postgres.dsn, hosts=2, schema=schema, timeout=TIMEOUT
    )
    try:
        cluster.register_agent("default", "cluster_agents:echo")
        routed = _one_session_per_host(cluster, 2)
        for sid in routed.values():
            assert cluster.session(sid).run("before").get(timeout=TIMEOUT).output == "echo: before"
        restartable_postgres.restart()
        for sid in routed.values():
            assert cluster.session(sid).run("after").get(timeout=TIMEOUT).output == "echo: after"
        restartable_postgres.stop()
        for sid in routed.values():
            with pytest.raises(PraxoError) as info:
                cluster.session(sid).run("down").get(timeout=TIMEOUT)
            assert info.value.code == "STORE_FAILED"
        restartable_postgres.start()
        for sid in routed.values():
            users = [m.content for m in _history(cluster, sid) if m.role == "user"]
            assert users[:2] == ["before", "after"]
    finally:
        cluster.stop()
