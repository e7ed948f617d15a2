"""A local three-node Ray cluster for the module, on a PostgreSQL server (skipped without)."""

from __future__ import annotations

import itertools
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")
_SCHEMAS = itertools.count(1)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    for _ in range(2):
        cluster.add_node(num_cpus=1)
    here = str(Path(__file__).parent)
    path = os.pathsep.join([here, *sys.path])
    ray.init(
        address=cluster.address,
        include_dashboard=False,
        logging_level=logging.ERROR,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture
def cluster_store(postgres_server: str) -> Iterator[tuple[str, str]]:
    """A DSN and a fresh schema for one cluster."""
    schema = f"praxo_test_cluster_{next(_SCHEMAS)}"
    yield postgres_server, schema
    import psycopg

    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
