"""Schedules on the cluster: made, listed and cancelled through the hosts; fired on the host
the session routes to.

Every host's runtime runs its schedule runner over the shared store, so each host reads
every schedule and, at a fire, tries to claim it; the claim is a lease written by
compare-and-set in the database, so one host claims each occurrence (another takes it over
when the claimer dies before it settles). The claimer does not run the fire itself: it sends
it to the host the session routes to (the rendezvous hash the front routes runs by), as a
``submit`` from the front would go, so that a session's runs are committed by its one host
and queued behind its other runs there. When that host does not answer (it died), the fire
goes to the next host in the session's rendezvous order, as the front's runs do while the
host is down; a fire sent again that way is submitted only if no session knows its run id.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING, Any, cast

import msgspec

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.cluster._core import _score
from praxo_actors.codes import RUNTIME_STOPPED, RUNTIME_TIMEOUT, SESSION_CRASHED
from praxo_actors.memory._schedules import ScheduleRow
from praxo_actors.runtime._schedule._front import Schedule, _row
from praxo_actors.runtime._schedule._submit import submit_fire

if TYPE_CHECKING:
    from datetime import datetime, timedelta

    from praxo_actors.cluster._core import ClusterCore
    from praxo_actors.runtime import Runtime
    from praxo_actors.runtime._kernel._kernel import Kernel
    from praxo_actors.runtime._schedule._runner import ScheduleRunner

__all__ = [
    "ClusterSchedules",
    "HostFires",
    "SessionSchedules",
    "aschedule",
    "aschedules",
    "schedule",
    "schedules",
]

_ASK_SECONDS = 60.0  # how long a host may take to store, read or cancel a schedule
_DOWN_SECONDS = 2.0  # a host that failed a fire is passed over this long (as the front does)

# -- on a host ---------------------------------------------------------------------------------


class HostFires:
    """A host's part in schedules: its runner reads every schedule of the store and sends each
    fire it claims to the session's host (the runner's thread calls :meth:`submit`)."""

    def __init__(self, name: str, runtime: Runtime, hub: Any, resume: bool) -> None:
        self.name = name
        self.runtime = runtime
        self._hub = hub
        self._lock = threading.Lock()
        self._peers: dict[str, Any] | None = None  # asked of the hub at the first fire
        self._down: dict[str, float] = {}
        runner = self.runner
        runner.submit = self.submit
        if not resume:  # the store is the cluster's: every host reads all of its schedules
            runner.start()

    @property
    def runner(self) -> ScheduleRunner:
        return self.runtime._schedules

    def _order(self, session_id: str) -> list[tuple[str, Any]]:
        """The hosts in the session's rendezvous order, those that failed lately last."""
        import ray

        with self._lock:
            peers = self._peers
        if peers is None:
            peers = ray.get(self._hub.host_handles.remote(), timeout=_ASK_SECONDS)
            with self._lock:
                self._peers = peers or None  # none yet: the cluster is starting
        now = time.monotonic()
        with self._lock:
            down = {n for n, until in self._down.items() if until > now}
        names = sorted(peers or {self.name: None}, key=lambda h: _score(h, session_id))
        names.reverse()
        names.sort(key=lambda h: h in down)  # stable: rendezvous order within each part
        return [(n, None if n == self.name else peers[n]) for n in names]

    def submit(
        self,
        front: Runtime | None,
        kernel: Kernel,
        timeout: float,
        row: ScheduleRow,
        run_id: str,
        occurrence_ns: int,
        now_ns: int,
    ) -> PraxoError | None:
        """Submit a fire on the session's host (see the module's docstring)."""
        import ray

        again = False
        for name, peer in self._order(row.session_id):
            if peer is None:
                if again and self.runner.known(run_id):
                    return None
                return submit_fire(front, kernel, timeout, row, run_id, occurrence_ns, now_ns)
            data = msgspec.msgpack.encode(row)
            try:
                ref = peer.fire.remote(data, run_id, occurrence_ns, now_ns, again)
                reply = ray.get(ref, timeout=timeout + _ASK_SECONDS)
            except ray.exceptions.GetTimeoutError:
                return PraxoError(RUNTIME_TIMEOUT, f"host {name} did not take the fire")
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
                with self._lock:
                    self._down[name] = time.monotonic() + _DOWN_SECONDS
                again = True
                continue
            return None if reply is None else PraxoError(reply[0], reply[1])
        return AgentError(SESSION_CRASHED, "no host took the fire")

    async def fire(
        self, data: bytes, run_id: str, occurrence_ns: int, now_ns: int, again: bool
    ) -> tuple[str, str] | None:
        """Submit a fire another host claimed here; its error's code and message, or None."""
        row = msgspec.msgpack.decode(data, type=ScheduleRow)
        runtime, runner = self.runtime, self.runner

        def submit() -> PraxoError | None:
            if again and runner.known(run_id):
                return None  # the host that died had taken it
            kernel, timeout = runner._kernel, runner._timeout
            return submit_fire(runtime, kernel, timeout, row, run_id, occurrence_ns, now_ns)

        error = await asyncio.to_thread(submit)
        return None if error is None else (error.code, error.message)

    async def create(self, session_id: str, agent: str, input: Any, when: dict[str, Any]) -> bytes:
        """Store a schedule of the session and arm it here; its row, encoded."""
        handle = self.runtime.session(session_id, agent)
        runner = self.runner
        made = _row(handle, runner, input, **when)
        stored = await asyncio.to_thread(runner.create, made)
        return msgspec.msgpack.encode(stored)

    async def rows(self, session_id: str | None) -> bytes:
        return msgspec.msgpack.encode(await asyncio.to_thread(self.runner.rows, session_id))

    async def cancel(self, schedule_id: str) -> None:
        await asyncio.to_thread(self.runner.cancel, schedule_id)


# -- in the caller's process -------------------------------------------------------------------


class _Cancel:
    """What a :class:`Schedule` of the cluster cancels through: any host that answers."""

    def __init__(self, cluster: ClusterCore) -> None:
        self.cluster = cluster

    def cancel(self, schedule_id: str) -> None:
        _ask(self.cluster, None, "cancel_schedule", schedule_id)


def _ask(cluster: ClusterCore, session_id: str | None, method: str, *args: Any) -> Any:
    """Call ``method`` on the session's host (any host without one), the next when one died."""
    import ray

    if cluster._stopped:
        raise AgentError(RUNTIME_STOPPED, "the cluster has stopped")
    first = [cluster._route(session_id)[0]] if session_id is not None else []
    names = first + [n for n in cluster._live() or list(cluster._hosts) if n not in first]
    for name in names:
        try:
            ref = getattr(cluster._hosts[name], method).remote(*args)
            reply = ray.get(ref, timeout=_ASK_SECONDS)
        except ray.exceptions.GetTimeoutError:
            raise PraxoError(RUNTIME_TIMEOUT, f"no answer within {_ASK_SECONDS} s") from None
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
            with cluster._lock:
                cluster._down[name] = time.monotonic() + _DOWN_SECONDS
            continue
        if reply[0] != "ok":
            raise PraxoError(reply[2], reply[3])
        return reply[1]
    raise PraxoError(RUNTIME_TIMEOUT, "no host answered")


def schedule(
    cluster: ClusterCore, session_id: str, agent: str, input: Any, when: dict[str, Any]
) -> Schedule:
    """Store a schedule through the session's host, and arm it on every host."""
    import ray

    data = _ask(cluster, session_id, "schedule", session_id, agent, input, when)
    row = msgspec.msgpack.decode(data, type=ScheduleRow)
    # Every host claims at the fire (the others would find it at their next rescan): one
    # host's death then delays no fire beyond a lease.
    refs = [h.arm_schedule.remote(row.id, row.next_fire_ns) for h in cluster._hosts.values()]
    ray.wait(refs, num_returns=len(refs), timeout=_ASK_SECONDS)
    return Schedule(row, cast("ScheduleRunner", _Cancel(cluster)))


async def aschedule(
    cluster: ClusterCore, session_id: str, agent: str, input: Any, when: dict[str, Any]
) -> Schedule:
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        None, lambda: schedule(cluster, session_id, agent, input, when)
    )


def schedules(cluster: ClusterCore, session_id: str | None) -> list[Schedule]:
    """The schedules in the cluster's store (one session's, with ``session_id``)."""
    data = _ask(cluster, session_id, "schedules", session_id)
    rows = msgspec.msgpack.decode(data, type=list[ScheduleRow])
    cancel = cast("ScheduleRunner", _Cancel(cluster))
    return [Schedule(row, cancel) for row in rows]


async def aschedules(cluster: ClusterCore, session_id: str | None) -> list[Schedule]:
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, lambda: schedules(cluster, session_id))


class SessionSchedules:
    """``ClusterSession``'s schedule methods (its ``cluster``, ``id`` and ``agent``)."""

    cluster: ClusterCore
    id: str
    agent: str

    def schedule(
        self,
        input: str,
        *,
        after: float | timedelta | None = None,
        at: datetime | None = None,
        every: float | timedelta | None = None,
        cron: str | None = None,
        tz: str | None = None,
        key: str | None = None,
        catch_up: str = "once",
    ) -> Schedule:
        """Run ``input`` in this session later, or again and again, as
        :meth:`~praxo_actors.runtime.SessionHandle.schedule`; each occurrence fires once in
        the cluster, on the host the session routes to (docs/how-to/schedules.md).

        Raises:
            PraxoError: ``SCHEDULE_INVALID``; ``RUNTIME_TIMEOUT``; ``RUNTIME_STOPPED``.
        """
        when = {"after": after, "at": at, "every": every, "cron": cron, "tz": tz}
        when |= {"key": key, "catch_up": catch_up}
        return schedule(self.cluster, self.id, self.agent, input, when)

    async def aschedule(
        self,
        input: str,
        *,
        after: float | timedelta | None = None,
        at: datetime | None = None,
        every: float | timedelta | None = None,
        cron: str | None = None,
        tz: str | None = None,
        key: str | None = None,
        catch_up: str = "once",
    ) -> Schedule:
        """:meth:`schedule`, awaited (it waits in the loop's default executor)."""
        when = {"after": after, "at": at, "every": every, "cron": cron, "tz": tz}
        when |= {"key": key, "catch_up": catch_up}
        return await aschedule(self.cluster, self.id, self.agent, input, when)

    def schedules(self) -> list[Schedule]:
        """Return this session's schedules, in id order."""
        return schedules(self.cluster, self.id)

    async def aschedules(self) -> list[Schedule]:
        """:meth:`schedules`, awaited."""
        return await aschedules(self.cluster, self.id)


class ClusterSchedules:
    """``ClusterCore``'s schedule methods."""

    def schedules(self, session_id: str | None = None) -> list[Schedule]:
        """The schedules in the cluster's store, in id order (``session_id``'s only, if given).

        Raises:
            PraxoError: ``RUNTIME_TIMEOUT`` if no host answered; ``RUNTIME_STOPPED``.
        """
        return schedules(cast("ClusterCore", self), session_id)

    async def aschedules(self, session_id: str | None = None) -> list[Schedule]:
        """:meth:`schedules`, awaited (it waits in the loop's default executor)."""
        return await aschedules(cast("ClusterCore", self), session_id)
