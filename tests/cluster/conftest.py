"""A local three-node Ray cluster for the module, on a PostgreSQL server (skipped without)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")
_SCHEMAS = itertools.count(1)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    from praxo_actors.testing._ray import local_ray_cluster

    with local_ray_cluster(nodes=3, path=[str(Path(__file__).parent)]) as cluster:
        yield cluster


@pytest.fixture
def cluster_store(postgres_server: str) -> Iterator[tuple[str, str]]:
    """A DSN and a fresh schema for one cluster."""
    schema = f"praxo_test_cluster_{next(_SCHEMAS)}"
    yield postgres_server, schema
    import psycopg

    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
