"""``runtime.result(run_id)``: the outcome of a run found by its id alone.

The runtime's loop knows the runs pending in this process (and each one's session); the store
knows the rest: the session that keeps a run's result (its index of runs by id, see
:mod:`~praxo_actors.memory._runs`) or holds it as a durable run accepted or in progress. Once
the session is found, the run's outcome is what its handle's ``result`` gives.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pykka

from praxo_actors._errors import PraxoError, ProtocolError
from praxo_actors.actors import check_not_blocking
from praxo_actors.codes import PROTOCOL_INVALID_MESSAGE, RUNTIME_TIMEOUT, RUNTIME_UNKNOWN_RUN
from praxo_actors.models import RunResult
from praxo_actors.runtime._front._handle import SessionHandle
from praxo_actors.runtime._front._results import check_result_args, run_result
from praxo_actors.runtime._front._submit import await_result
from praxo_actors.runtime._protocol import FindRun, RunFound, decode, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._front._runtime import Runtime
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["aresult_by_id", "result_by_id", "session_of", "stored_session"]


def result_by_id(runtime: Runtime, kernel: Kernel, run_id: str, timeout: float | None) -> RunResult:
    """See :meth:`Runtime.result`."""
    check_result_args(run_id, timeout)
    check_not_blocking("Runtime.result() (use aresult)")
    end = None if timeout is None else time.monotonic() + timeout
    try:
        pending = kernel.call(kernel.known, run_id, timeout=kernel.timeout)
        if pending is not None:
            return pending.get(timeout=timeout)
        session_id = stored_session(kernel, run_id)
    except pykka.Timeout:
        raise PraxoError(RUNTIME_TIMEOUT, f"no result for {run_id!r} within {timeout} s") from None
    if session_id is None:
        raise PraxoError(RUNTIME_UNKNOWN_RUN, f"no session knows a run {run_id!r}")
    # The agent is the one each kept result names (a handle's agent only types results that
    # name none: here, none).
    handle = SessionHandle(runtime, kernel, session_id, "")
    left = None if end is None else max(0.0, end - time.monotonic())
    return run_result(handle, kernel, run_id, left)


def stored_session(kernel: Kernel, run_id: str) -> str | None:
    """Return the session the store names for run ``run_id`` (None: none keeps or holds it).

    Raises:
        pykka.Timeout: No answer within the runtime's ``timeout``.
        ProtocolError: ``PROTOCOL_INVALID_MESSAGE`` for a reply that is not the store's.
    """
    reply = decode(kernel.ask_store(encode(FindRun(run_id))).get(timeout=kernel.timeout))
    if not isinstance(reply, RunFound):
        raise ProtocolError(PROTOCOL_INVALID_MESSAGE, "bad store reply")
    return reply.session_id


def session_of(kernel: Kernel, run_id: str) -> str | None:
    """Return the session of run ``run_id``: a run pending in this process, else the one the
    store names (None: no session knows it). Off the loop; each step bounded as in
    :func:`stored_session`."""
    pending = kernel.call(kernel.known, run_id, timeout=kernel.timeout)
    if pending is not None:
        found: str = pending.session_id
        return found
    return stored_session(kernel, run_id)


async def aresult_by_id(
    runtime: Runtime, kernel: Kernel, run_id: str, timeout: float | None
) -> RunResult:
    """See :meth:`Runtime.aresult`."""
    return await await_result(
        kernel, run_id, timeout, lambda: result_by_id(runtime, kernel, run_id, timeout)
    )
