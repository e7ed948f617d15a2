"""``ClusterRuntime``: the ``Runtime`` surface over N session hosts that are Ray actors.

Each host is a Ray actor running an embedded :class:`~praxo_actors.runtime.Runtime` on one
shared :class:`~praxo_actors.memory.PostgresStore`. A session is routed by rendezvous hash of
its id over the live hosts, so it stays on one host while that host lives, and moves (to be
restored from the store) only when it dies. Versioned commits keep two hosts that both think
they hold a session from overwriting each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from typing import Any

import msgspec

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.agent import new_run_id
from praxo_actors.agent._caller import traceparent
from praxo_actors.cluster._by_id import Started, agents_of, session_of
from praxo_actors.cluster._core import _DOWN_SECONDS, _score
from praxo_actors.cluster._events import TAKE_WAIT, ClusterEvents
from praxo_actors.cluster._future import ClusterRunFuture, _unpack
from praxo_actors.cluster._host import Host
from praxo_actors.cluster._hub import Hub
from praxo_actors.cluster._order import Sent
from praxo_actors.cluster._results import typed_output
from praxo_actors.cluster._schedules import ClusterSchedules
from praxo_actors.cluster._session import ClusterSession
from praxo_actors.codes import (
    RUNTIME_INVALID_CONFIG,
    RUNTIME_INVALID_INPUT,
    RUNTIME_STOPPED,
    RUNTIME_TIMEOUT,
    RUNTIME_UNKNOWN_RUN,
    SESSION_CRASHED,
)
from praxo_actors.models import RunResult
from praxo_actors.runtime import RegisteredAgent, RuntimeStatistics
from praxo_actors.runtime._front._results import check_result_args

__all__ = [
    "TAKE_WAIT",
    "ClusterEvents",
    "ClusterRunFuture",
    "ClusterRuntime",
    "ClusterSession",
    "ClusterStatistics",
]

_FIND_SECONDS = 15.0  # how long resume waits for a host to name the interrupted run


class ClusterStatistics(msgspec.Struct, frozen=True):
    """The runtime's counters summed over the hosts, and each host's own."""

    total: RuntimeStatistics
    hosts: dict[str, RuntimeStatistics]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.total, name)


class ClusterRuntime(ClusterSchedules):
    """Session hosts on Ray over one PostgreSQL store (see the module docstring)."""

    _owns_ray: bool
    _hub: Any
    _hosts: dict[str, Any]
    _down: dict[str, float]
    _lock: threading.Lock
    _durable: set[str]
    _sent: Sent
    _started: Started
    events: ClusterEvents
    _stopped: bool

    def __init__(self) -> None:
        raise TypeError("use ClusterRuntime.start(...)")

    @classmethod
    def start(
        cls,
        store: Any,
        hosts: int = 3,
        address: str | None = None,
        *,
        schema: str = "public",
        max_restarts: int = 3,
        **runtime_options: Any,
    ) -> ClusterRuntime:
        """Start ``hosts`` session hosts; join Ray at ``address`` (None: the running or a new
        local Ray instance).

        Args:
            store: A :class:`~praxo_actors.memory.PostgresStore` or its DSN string; each host
                opens its own connection.
            hosts: How many session hosts.
            address: A Ray cluster to join (None: the one this process joined, or a local one).
            schema: The store's schema.
            max_restarts: Ray restarts a dead host this many times.
            runtime_options: Passed to each host's ``Runtime.start``.

        Raises:
            ImportError: Ray is not installed (``pip install 'praxo-actors[ray]'``).
            PraxoError: ``RUNTIME_INVALID_CONFIG`` for bad arguments.
        """
        try:
            import ray
        except ImportError:  # pragma: no cover - the extra is missing
            raise ImportError("ClusterRuntime needs Ray: pip install 'praxo-actors[ray]'") from None
        dsn = store if isinstance(store, str) else getattr(store, "dsn", None)
        if not isinstance(dsn, str):
            raise PraxoError(RUNTIME_INVALID_CONFIG, "store must be a PostgresStore or its DSN")
        if not isinstance(store, str) and isinstance(getattr(store, "schema", None), str):
            schema = store.schema
        if isinstance(hosts, bool) or not isinstance(hosts, int) or hosts < 1:
            raise PraxoError(RUNTIME_INVALID_CONFIG, "hosts must be an int >= 1")
        self = object.__new__(cls)
        self._owns_ray = False
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, logging_level=logging.ERROR)
            self._owns_ray = True
        self._hub = ray.remote(Hub).options(num_cpus=0).remote()
        host_class = ray.remote(Host).options(
            num_cpus=0, max_restarts=max_restarts, max_task_retries=0, max_concurrency=1000
        )
        self._hosts = {}
        for i in range(hosts):
            name = f"host-{i}"
            self._hosts[name] = host_class.remote(name, dsn, schema, runtime_options, self._hub)
        ray.get([h.ping.remote() for h in self._hosts.values()], timeout=120)
        ray.get(self._hub.set_hosts.remote(self._hosts), timeout=120)
        self._down = {}
        self._lock = threading.Lock()
        self._durable = set()
        self._sent = Sent()
        self._started = Started()
        self.events = ClusterEvents(self)
        self._stopped = False
        return self

    # -- agents, routing -------------------------------------------------------------------

    def register_agent(
        self, name: str, factory: Any, per_session: bool = False, durable: bool = False
    ) -> None:
        """Register an agent on every host (a restarted host registers it again).

        ``factory`` is ``"package.module:function"`` or a picklable callable.
        """
        import ray

        ray.get(self._hub.register.remote(name, factory, per_session, durable))
        ray.get(
            [
                h.register_agent.remote(name, factory, per_session, durable)
                for h in self._hosts.values()
            ]
        )
        if durable:
            self._durable.add(name)

    def _live(self) -> list[str]:
        now = time.monotonic()
        with self._lock:
            return [n for n in self._hosts if self._down.get(n, 0.0) <= now]

    def _route(self, session_id: str) -> tuple[str, Any]:
        live = self._live() or list(self._hosts)
        name = max(live, key=lambda host: _score(host, session_id))
        return name, self._hosts[name]

    def host_of(self, session_id: str) -> str:
        """The host ``session_id`` routes to now."""
        return self._route(session_id)[0]

    def session(self, session_id: str, agent: str = "default") -> ClusterSession:
        if not isinstance(session_id, str) or not session_id:
            raise PraxoError(RUNTIME_INVALID_INPUT, "session id must be a non-empty str")
        return ClusterSession(self, session_id, agent)

    def _run(
        self, session_id: str, agent: str, input: str, deadline: float | None
    ) -> ClusterRunFuture:
        if self._stopped:
            raise AgentError(RUNTIME_STOPPED, "the cluster has stopped")
        run_id = new_run_id()
        pinned = self._sent.pinned(session_id)  # the host of a run of the session in flight
        name, host = (pinned, self._hosts[pinned]) if pinned else self._route(session_id)
        self._started.add(run_id, session_id)
        future = ClusterRunFuture(self, session_id, agent, run_id, name, None, (input, deadline))
        future.number, after = self._sent.send(session_id, name, future)
        future._ref = host.run.remote(
            session_id, agent, input, deadline, run_id, future.number, after, traceparent()
        )
        return future

    def _submit(
        self, session_id: str, agent: str, input: str, deadline: float | None, timeout: float
    ) -> str:
        import ray

        if self._stopped:
            raise AgentError(RUNTIME_STOPPED, "the cluster has stopped")
        name, host = self._route(session_id)
        try:
            ref = host.submit.remote(session_id, agent, input, deadline, traceparent())
            reply = ray.get(ref, timeout=timeout)
        except ray.exceptions.GetTimeoutError:
            raise PraxoError(RUNTIME_TIMEOUT, f"not accepted within {timeout} s") from None
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
            with self._lock:
                self._down[name] = time.monotonic() + _DOWN_SECONDS
            raise AgentError(SESSION_CRASHED, f"host {name} died") from None
        run_id: str = _unpack(reply, None, str)
        self._started.add(run_id, session_id)
        return run_id

    def _resume(
        self, session_id: str, agent: str, document: str, deadline: float | None
    ) -> ClusterRunFuture:
        if self._stopped:
            raise AgentError(RUNTIME_STOPPED, "the cluster has stopped")
        import ray

        name, host = self._route(session_id)
        # The interrupted run's id first, so that the future is that run's from the start (a
        # new id only when the host cannot say: the resume then says why on the future).
        try:
            found = ray.get(host.interrupted.remote(session_id, agent), timeout=_FIND_SECONDS)
        except Exception:
            found = None
        run_id = found if isinstance(found, str) else new_run_id()
        self._started.add(run_id, session_id)
        ref = host.resume.remote(session_id, agent, document, deadline)
        return ClusterRunFuture(self, session_id, agent, run_id, name, ref, None)

    def _after_host_failed(self, future: ClusterRunFuture, timeout: float | None) -> RunResult:
        with self._lock:
            self._down[future.host] = time.monotonic() + _DOWN_SECONDS
        if future.agent not in self._durable or future.sent is None:
            raise AgentError(SESSION_CRASHED, f"host {future.host} died", future.run_id)
        # Journaled, the run is resumed by the host the session routes to now; not journaled
        # yet, nothing of it was kept, and it is sent there again under the same id.
        try:
            return self._result(future.session_id, future.agent, future.run_id, timeout or 60.0)
        except PraxoError as exc:
            if exc.code != "RUNTIME_UNKNOWN_RUN":
                raise
        import ray

        name, host = self._route(future.session_id)
        assert future.sent is not None
        order = self._sent.send_again(future.session_id, name, future, future.number)
        if order is None:  # sent again now, it would commit after a run sent after it
            raise AgentError(
                SESSION_CRASHED, f"host {future.host} died; a later run was sent", future.run_id
            )
        input, deadline = future.sent
        future.host, (future.number, after) = name, order
        again = future._ref = host.run.remote(
            future.session_id, future.agent, input, deadline, future.run_id, future.number, after
        )
        try:
            reply = ray.get(again, timeout=timeout)
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
            raise AgentError(SESSION_CRASHED, f"host {name} died", future.run_id) from None
        result: RunResult = typed_output(_unpack(reply, future.run_id, RunResult), reply)
        return result

    def _after_taken_over(
        self, future: ClusterRunFuture, reply: tuple[Any, ...], timeout: float | None
    ) -> RunResult:
        """The outcome of a durable run whose copy on its host lost to another host's copy.

        The session moved while the run was in flight, and the host it moved to resumed the
        run from its journal; the copy that finished first committed it. The other one then
        fails (its journal write or its commit refused): the run's outcome is the committed
        one, kept with the session, or else the copy's own error.
        """
        try:
            wait = 60.0 if timeout is None else timeout
            return self._result(future.session_id, future.agent, future.run_id, wait)
        except PraxoError:
            pass
        result: RunResult = typed_output(_unpack(reply, future.run_id, RunResult), reply)
        return result

    def _result(
        self, session_id: str, agent: str | None, run_id: str, timeout: float | None
    ) -> RunResult:
        import ray

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            name, host = self._route(session_id)
            try:
                reply = ray.get(
                    host.result.remote(session_id, agent, run_id, timeout),
                    timeout=None if timeout is None else timeout + 5,
                )
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
                with self._lock:
                    self._down[name] = time.monotonic() + _DOWN_SECONDS
                if deadline is not None and time.monotonic() > deadline:
                    raise AgentError(SESSION_CRASHED, f"host {name} died", run_id) from None
                continue
            result: RunResult = typed_output(_unpack(reply, run_id, RunResult), reply)
            return result

    def result(self, run_id: str, timeout: float | None = None) -> RunResult:
        """The result of run ``run_id``, found by its id alone (as ``Runtime.result``).

        The session of a run this front started is remembered (its last 10,000); any other's
        is read from the shared store by a host. The session's host then answers as
        :meth:`ClusterSession.result` does (a durable run left journaled is resumed there).

        Raises:
            AgentError: The run's own error (its code).
            PraxoError: ``RUNTIME_UNKNOWN_RUN``; ``RUNTIME_INVALID_INPUT``;
                ``RUNTIME_TIMEOUT``; ``RUNTIME_STOPPED``.
        """
        check_result_args(run_id, timeout)
        session_id = session_of(self, run_id)
        if session_id is None:
            raise PraxoError(RUNTIME_UNKNOWN_RUN, f"no session knows a run {run_id!r}")
        return self._result(session_id, None, run_id, timeout)

    async def aresult(self, run_id: str, timeout: float | None = None) -> RunResult:
        """:meth:`result`, awaited (it waits in the loop's default executor)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.result, run_id, timeout)

    def agents(self) -> dict[str, RegisteredAgent]:
        """The agents registered with the cluster by name, in name order (a copy).

        A factory registered as ``"package.module:function"`` is imported when called.
        """
        return agents_of(self)

    def _publish(self, on: bool) -> None:
        import ray

        ray.get([h.publish_events.remote(on) for h in self._hosts.values()])

    # -- statistics, stop ------------------------------------------------------------------

    def statistics(self) -> ClusterStatistics:
        """The counters summed over the hosts that answer, and each host's."""
        import ray

        per: dict[str, RuntimeStatistics] = {}
        for name, host in self._hosts.items():
            try:
                data = ray.get(host.statistics.remote(), timeout=30)
            except Exception:
                continue
            per[name] = msgspec.msgpack.decode(data, type=RuntimeStatistics)
        fields = RuntimeStatistics.__struct_fields__
        total = RuntimeStatistics(**{f: sum(getattr(s, f) for s in per.values()) for f in fields})
        return ClusterStatistics(total, per)

    def stop(self) -> None:
        """Stop every host and the hub; leave no actor behind (and shut down a Ray we started)."""
        import ray

        if self._stopped:
            return
        self._stopped = True
        self.events.close()
        for host in self._hosts.values():
            with contextlib.suppress(Exception):  # a dead host: killed below all the same
                ray.get(host.stop.remote(), timeout=60)
            ray.kill(host, no_restart=True)
        ray.kill(self._hub, no_restart=True)
        if self._owns_ray:
            ray.shutdown()

    def __enter__(self) -> ClusterRuntime:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
