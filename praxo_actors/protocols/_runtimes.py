"""The two runtimes a protocol app serves: a ``Runtime``, or a ``ClusterRuntime``.

Both give a session handle with ``run``, ``arun``, ``aresume`` and ``astream`` and list their
agents with ``agents()``; this module is the one place that tells them apart, for what a
cluster does otherwise. A run on a cluster goes on when the task awaiting it is cancelled (its
host runs it; nothing in this process can stop it at once), so an app that would cancel a
run in flight refuses instead with ``PROTOCOL_NOT_ON_CLUSTER``; and a resumed run's events
come from whichever host runs it, through the cluster's own stream. A run is also found here by
its id alone (the session that holds or keeps it), for a task an app no longer remembers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import PraxoError
from praxo_actors.codes import RUNTIME_INVALID_INPUT, RUNTIME_TIMEOUT
from praxo_actors.models import Event, RunResult

if TYPE_CHECKING:
    from praxo_actors.runtime import SessionHandle

__all__ = [
    "NOT_ON_CLUSTER",
    "cancel_run",
    "check",
    "journaled",
    "on_cluster",
    "outcome",
    "resumed_on_cluster",
    "session_of_run",
]

NOT_ON_CLUSTER = "PROTOCOL_NOT_ON_CLUSTER"
"""The code of a request a protocol app over a ``ClusterRuntime`` cannot serve."""


def on_cluster(runtime: Any) -> bool:
    """Whether ``runtime`` is a ``ClusterRuntime`` (anything else :func:`check` lets in is a
    ``Runtime``)."""
    from praxo_actors.runtime import Runtime

    return not isinstance(runtime, Runtime)


def check(runtime: Any) -> None:
    """Refuse anything but a ``Runtime`` or a ``ClusterRuntime``.

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT``.
    """
    from praxo_actors.runtime import Runtime

    if isinstance(runtime, Runtime):
        return
    from praxo_actors.cluster._runtime import ClusterRuntime  # Ray is imported only to start

    if not isinstance(runtime, ClusterRuntime):
        raise PraxoError(
            RUNTIME_INVALID_INPUT, "a protocol app serves a Runtime or a ClusterRuntime"
        )


async def outcome(handle: SessionHandle, future: Any) -> RunResult:
    """Await a run's ``future``: on a ``Runtime``, cancelling the awaiting task cancels the
    run at once; on a cluster the run goes on (its host runs it)."""
    own = getattr(handle, "_outcome", None)
    if own is not None:
        result: RunResult = await own(future)
        return result
    settled: RunResult = await future
    return settled


async def session_of_run(runtime: Any, run_id: str) -> str | None:
    """Return the id of the session that holds or keeps run ``run_id`` (None: no session
    knows it), looked up in a worker thread: a run pending in this process, else the store's
    index of runs (on a cluster, the front's memory of its runs, else a host's store).

    Raises:
        PraxoError: ``RUNTIME_TIMEOUT``; ``RUNTIME_STOPPED``.
    """
    if on_cluster(runtime):
        from praxo_actors.cluster._by_id import session_of

        return await asyncio.to_thread(session_of, runtime, run_id)
    return await asyncio.to_thread(_session_here, runtime, run_id)


def _session_here(runtime: Any, run_id: str) -> str | None:
    import pykka

    from praxo_actors.runtime._front._by_id import session_of

    try:
        return session_of(runtime._kernel, run_id)
    except pykka.Timeout:
        raise PraxoError(RUNTIME_TIMEOUT, f"no session named for {run_id!r} in time") from None


def journaled(runtime: Any, agent: str) -> bool:
    """Whether a run of ``agent`` on ``runtime`` is accepted into the store by ``asubmit``
    before its id is handed out (a durable agent's; on a cluster, into the shared store by the
    session's host): a run acknowledged to a client then outlives the process."""
    if on_cluster(runtime):
        return agent in runtime._durable
    kernel = getattr(runtime, "_kernel", None)
    return kernel is not None and bool(kernel.agents.is_durable(agent))


def cancel_run(runtime: Any, run_id: str) -> None:
    """Cancel run ``run_id`` at once, on a ``Runtime`` (a cluster's run goes on)."""
    kernel = getattr(runtime, "_kernel", None)
    if kernel is not None:
        kernel.post(kernel.cancel, run_id, True)


async def resumed_on_cluster(handle: Any, value: Any) -> AsyncIterator[Event]:
    """Resume a cluster session's interrupted run with ``value``; yield its events to the
    terminal one (the stream reads them from whichever host runs it).

    Raises:
        PraxoError: The resume's error when the run did not go on (say
            ``SESSION_NOT_INTERRUPTED``).
    """
    from praxo_actors.cluster._session import ClusterRunStream

    stream = ClusterRunStream(handle, "", None, 1000, resume=lambda: handle.resume(value))
    try:
        seen = False
        async for event in stream:
            seen = True
            yield event
        if not seen:
            await stream.result()  # the resume's own error
    finally:
        await stream.aclose()
