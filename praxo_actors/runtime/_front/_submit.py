"""``handle.submit(input)``: accept a run, hand out its id, and let the caller poll for it.

A run of a plain agent is admitted and its id returned at once. A durable agent's run is
accepted into its session's inbox in the store before the id is returned, whether it starts at
once or waits behind a running run of its session: after a stop or the death of the process,
the next ``resume=True`` runtime runs it once, in order, and ``handle.result(run_id)`` finds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from praxo_actors._errors import PraxoError
from praxo_actors._log import get_logger
from praxo_actors.actors import check_not_blocking
from praxo_actors.agent import new_run_id
from praxo_actors.codes import RUNTIME_INVALID_INPUT, RUNTIME_TIMEOUT
from praxo_actors.models import RunResult
from praxo_actors.runtime._front._on_loop import acall, on_loop
from praxo_actors.runtime._front._results import check_result_args, run_result, submitted_result

if TYPE_CHECKING:
    from praxo_actors.runtime._front._handle import SessionHandle
    from praxo_actors.runtime._kernel._kernel import Kernel
    from praxo_actors.runtime._kernel._run_future import RunFuture

__all__ = ["aresult", "asubmit", "submit"]

logger = get_logger("praxo_actors.runtime")


def submit(handle: SessionHandle, kernel: Kernel, input: str, deadline: float | None) -> str:
    """See :meth:`SessionHandle.submit`."""
    _check(input)
    run_id = new_run_id()
    if handle._agent is None and kernel.agents.view().durable and on_loop(kernel.host):
        handle.agent  # noqa: B018 - read here: the loop cannot wait for its session's answer
    if not _journaled(handle, kernel):
        handle._submitted = handle._submit(run_id, input, deadline, None)
        return run_id
    check_not_blocking("SessionHandle.submit() of a durable agent (use asubmit)")
    stored = threading.Event()
    handle._submitted = _send(handle, kernel, run_id, input, deadline, stored.set)
    if not stored.wait(kernel.timeout):
        _late(handle, kernel, run_id)
    return run_id


async def asubmit(handle: SessionHandle, kernel: Kernel, input: str, deadline: float | None) -> str:
    """See :meth:`SessionHandle.asubmit`."""
    _check(input)
    run_id = new_run_id()
    if not _journaled(handle, kernel):
        handle._submitted = handle._submit(run_id, input, deadline, None)
        return run_id
    loop = asyncio.get_running_loop()
    stored: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not stored.done():
            stored.set_result(None)

    def signal() -> None:
        if asyncio._get_running_loop() is loop:  # on the caller's loop: no self-pipe write
            wake()
            return
        with contextlib.suppress(RuntimeError):  # the caller's loop is closed
            loop.call_soon_threadsafe(wake)

    handle._submitted = _send(handle, kernel, run_id, input, deadline, signal)
    try:
        async with asyncio.timeout(kernel.timeout):
            await stored
    except TimeoutError:
        _late(handle, kernel, run_id)
    return run_id


async def aresult(
    handle: SessionHandle, kernel: Kernel, run_id: str, timeout: float | None
) -> RunResult:
    """See :meth:`SessionHandle.aresult`."""
    check_result_args(run_id, timeout)
    completed = submitted_result(handle, run_id)
    if completed is not None:
        return completed
    return await await_result(
        kernel, run_id, timeout, lambda: run_result(handle, kernel, run_id, timeout)
    )


async def await_result(
    kernel: Kernel, run_id: str, timeout: float | None, look_up: Callable[[], RunResult]
) -> RunResult:
    """Await a run pending in this process, else ``look_up()`` its outcome in the store."""
    check_result_args(run_id, timeout)
    # A pending run (the common case: a run just submitted) is awaited on the caller's loop;
    # only the store look-ups, which block, go to a worker thread.
    pending = await acall(kernel.host, kernel.known, run_id, timeout=kernel.timeout)
    if pending is None:
        return await asyncio.to_thread(look_up)
    try:
        async with asyncio.timeout(timeout):
            return await pending  # cancelling this wait leaves the run going
    except TimeoutError:
        raise PraxoError(RUNTIME_TIMEOUT, f"no result for {run_id!r} within {timeout} s") from None


def _journaled(handle: SessionHandle, kernel: Kernel) -> bool:
    """Whether a run submitted through ``handle`` is put in its session's inbox first: its
    agent's is durable, or (a handle naming no agent) some agent is: the session then answers
    the wait itself when the agent it runs the run with is not durable."""
    agent = handle._agent
    if agent is None:
        return bool(kernel.agents.view().durable)
    return kernel.agents.is_durable(agent)


def _check(input: object) -> None:
    from praxo_actors.runtime._front._inputs import check_text

    if not isinstance(input, str):
        raise PraxoError(RUNTIME_INVALID_INPUT, "input must be a str")
    check_text(input, "input")


def _send(
    handle: SessionHandle,
    kernel: Kernel,
    run_id: str,
    input: str,
    deadline: float | None,
    stored: Callable[[], None],
) -> RunFuture:
    """Send a durable run that is journaled first; ``stored()`` once it is (or has ended)."""
    # Posted before the run, so the kernel has the callback when the store acknowledges.
    kernel.post(kernel.expect_journal, run_id, stored)
    future = handle._submit(run_id, input, deadline, None, journal=True)

    def settled(_future: object) -> None:
        stored()
        kernel.post(kernel.forget_journal, run_id)

    future.add_done_callback(settled)
    return future


def _late(handle: SessionHandle, kernel: Kernel, run_id: str) -> None:
    logger.warning(
        "run_not_journaled_yet", session_id=handle.id, run_id=run_id, timeout=kernel.timeout
    )
