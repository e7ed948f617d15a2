"""A run of the cluster found by its id alone, and the cluster's registered agents.

The front remembers the session of each run it started (its last ``STARTED_KEPT``); any other
run's session is found in the shared store (the session log's index of kept results by run
id, and the durable runs accepted or in progress), as a host reads it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Protocol

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.agent import AgentOptions
from praxo_actors.cluster._core import ClusterCore
from praxo_actors.cluster._host import resolve_factory
from praxo_actors.codes import RUNTIME_STOPPED, RUNTIME_TIMEOUT
from praxo_actors.runtime import RegisteredAgent

__all__ = ["STARTED_KEPT", "Knows", "Started", "agents_of", "session_of"]

STARTED_KEPT = 10_000
"""How many runs the front started it remembers the session of (a few hundred bytes each)."""

_ASK_SECONDS = 30.0  # how long a host may take to read the store for a run's session


class Started:
    """The sessions of the runs this front started, the newest ``STARTED_KEPT`` (any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, str] = OrderedDict()

    def add(self, run_id: str, session_id: str) -> None:
        with self._lock:
            self._runs[run_id] = session_id
            if len(self._runs) > STARTED_KEPT:
                self._runs.popitem(last=False)

    def get(self, run_id: str) -> str | None:
        with self._lock:
            return self._runs.get(run_id)

    def clear(self) -> None:
        with self._lock:
            self._runs.clear()


class Knows(ClusterCore, Protocol):
    """A cluster front that remembers the sessions of the runs it started."""

    _started: Started


def session_of(cluster: Knows, run_id: str) -> str | None:
    """Return the session of run ``run_id`` (None: no session knows it).

    Raises:
        PraxoError: ``RUNTIME_TIMEOUT`` if no host answered; ``RUNTIME_STOPPED``.
    """
    import ray

    found = cluster._started.get(run_id)
    if found is not None:
        return found
    if cluster._stopped:
        raise AgentError(RUNTIME_STOPPED, "the cluster has stopped")
    for name in cluster._live() or list(cluster._hosts):
        try:
            reply = ray.get(cluster._hosts[name].find_session.remote(run_id), timeout=_ASK_SECONDS)
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
            continue  # another host reads the same store
        except ray.exceptions.GetTimeoutError:
            late = f"no host answered within {_ASK_SECONDS} s"
            raise PraxoError(RUNTIME_TIMEOUT, late) from None
        return reply if isinstance(reply, str) else None
    raise PraxoError(RUNTIME_TIMEOUT, "no host answered")


class _Imported:
    """An agent factory registered as ``"package.module:function"``, imported when called."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self) -> AgentOptions:
        options: AgentOptions = resolve_factory(self.path)()
        return options

    def __repr__(self) -> str:
        return f"<agent factory {self.path}>"


def agents_of(cluster: ClusterCore) -> dict[str, RegisteredAgent]:
    """Return the agents registered with the cluster, by name in name order."""
    import ray

    specs: dict[str, tuple[Any, bool, bool]] = ray.get(
        cluster._hub.agent_specs.remote(), timeout=_ASK_SECONDS
    )
    return {
        name: RegisteredAgent(
            name,
            _Imported(factory) if isinstance(factory, str) else factory,
            per_session,
            durable,
        )
        for name, (factory, per_session, durable) in sorted(specs.items())
    }
