"""ClusterRuntime: a run's result by its id alone, and the registered agents."""

from __future__ import annotations

from typing import Any

import pytest

from praxo_actors import PraxoError
from praxo_actors.agent import AgentOptions
from praxo_actors.cluster import ClusterRuntime

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.timeout(900)
TIMEOUT = 120.0  # a busy machine (see test_cluster.py)


def test_a_run_is_found_by_its_id_and_the_agents_are_listed(
    ray_cluster: Any, cluster_store: Any
) -> None:
    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=2, schema=schema, idle_timeout=None, timeout=TIMEOUT)
    try:
        cluster.register_agent("default", "cluster_agents:echo")
        cluster.register_agent("kept", "cluster_agents:echo", durable=True)
        agents = cluster.agents()
        assert list(agents) == ["default", "kept"]
        assert agents["kept"].durable and not agents["default"].durable
        assert isinstance(agents["default"].options_factory(), AgentOptions)
        futures = [cluster.session(f"s{i}", "kept" if i % 2 else "default") for i in range(6)]
        ids = [session.run(f"m{i}").run_id for i, session in enumerate(futures)]
        expected = [f"echo: m{i}" for i in range(6)]
        assert [cluster.result(r, timeout=TIMEOUT).output for r in ids] == expected
        submitted = cluster.session("t", "kept").submit("late", timeout=TIMEOUT)
        assert cluster.result(submitted, timeout=TIMEOUT).output == "echo: late"
        # Runs this front did not start: their sessions are read from the shared store.
        cluster._started.clear()
        assert [cluster.result(r, timeout=TIMEOUT).output for r in ids] == expected
        with pytest.raises(PraxoError) as info:
            cluster.result("run_nobody_knows", timeout=TIMEOUT)
        assert info.value.code == "RUNTIME_UNKNOWN_RUN"
        with pytest.raises(PraxoError) as bad:
            cluster.result("", timeout=TIMEOUT)
        assert bad.value.code == "RUNTIME_INVALID_INPUT"
        # The protocol apps read a cluster's agents as a runtime's.
        from praxo_actors.protocols._registered import registered_agents

        assert registered_agents(cluster) == ["default", "kept"]  # type: ignore[arg-type]
    finally:
        cluster.stop()
