"""Many hosts: session hosts on Ray over one PostgreSQL store (extra ``ray``).

``ClusterRuntime.start(store, hosts=N)`` gives the ``Runtime`` surface (``register_agent``,
``session(id).run(...)`` futures, ``submit``, ``result``/``aresult``, ``astream``,
``history()``, ``schedule``/``schedules``, ``events.subscribe``, ``statistics()``,
``stop()``) over N hosts that are Ray actors, each an embedded runtime on the shared
:class:`~praxo_actors.memory.PostgresStore`.
Ray is imported only when a cluster starts.
"""

from __future__ import annotations

from praxo_actors.cluster._runtime import (
    ClusterRunFuture,
    ClusterRuntime,
    ClusterSession,
    ClusterStatistics,
)
from praxo_actors.cluster._session import ClusterRunStream

__all__ = [
    "ClusterRunFuture",
    "ClusterRunStream",
    "ClusterRuntime",
    "ClusterSession",
    "ClusterStatistics",
]
