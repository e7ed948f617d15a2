"""A local multi-node Ray cluster in this machine, for tests and benchmarks of the cluster.

``with local_ray_cluster(nodes=3, path=[folder]) as cluster:`` starts a head and ``nodes - 1``
more nodes of one CPU each (``ray.cluster_utils.Cluster``), joins this process to it with
``folder`` ahead of ``sys.path`` on every worker (so a ``"module:function"`` factory there can
be imported by the hosts), and shuts both down again. It needs the ``ray`` extra.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["local_ray_cluster"]


@contextlib.contextmanager
def local_ray_cluster(nodes: int = 3, path: Sequence[str] = ()) -> Iterator[Any]:
    """Start the cluster and join it; yield the ``Cluster``; leave and stop it."""
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1)
        ray.init(
            address=cluster.address,
            include_dashboard=False,
            logging_level=logging.ERROR,
            runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([*path, *sys.path])}},
        )
        try:
            yield cluster
        finally:
            ray.shutdown()
    finally:
        cluster.shutdown()  # type: ignore[no-untyped-call]
