"""``handle.result(run_id)``: the outcome of a run that is pending, kept, or to be resumed."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import msgspec
import pykka

from praxo_actors._errors import AgentError, CheckpointError, PraxoError, ProtocolError
from praxo_actors.actors import MNFuture, check_not_blocking
from praxo_actors.codes import (
    CHECKPOINT_SIGNATURE,
    PROTOCOL_INVALID_MESSAGE,
    RUNTIME_INVALID_INPUT,
    RUNTIME_STOPPED,
    RUNTIME_TIMEOUT,
    RUNTIME_UNKNOWN_RUN,
    STORE_FAILED,
)
from praxo_actors.core._schema_types import type_converter
from praxo_actors.memory._log import StoredSession
from praxo_actors.models import RunResult, Session
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._kernel._waits import check_timeout
from praxo_actors.runtime._protocol import (
    LoadResults,
    LoadSessions,
    Results,
    Sessions,
    decode,
    encode,
)
from praxo_actors.runtime._session._restore import result_signed

if TYPE_CHECKING:
    from praxo_actors.runtime._front._handle import SessionHandle
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["check_result_args", "run_result", "submitted_result"]


def run_result(
    handle: SessionHandle, kernel: Kernel, run_id: str, timeout: float | None
) -> RunResult:
    """See :meth:`SessionHandle.result`.

    ``timeout`` bounds the wait for a run still going (None: as long as it takes); each look-up
    in the store is bounded by the runtime's own ``timeout`` as well, so ``timeout=0`` polls.
    """
    check_result_args(run_id, timeout)
    check_not_blocking("SessionHandle.result() (use aresult)")
    completed = submitted_result(handle, run_id)
    if completed is not None:
        return completed
    io = kernel.timeout
    end = None if timeout is None else time.monotonic() + timeout
    try:
        pending = kernel.call(kernel.known, run_id, timeout=io)
        if pending is not None:
            return pending.get(timeout=_left(end))
        kept = _kept(handle, kernel, run_id, io)
        if kept is not None:
            return kept
        reply = decode(_ask(kernel, encode(LoadSessions([handle.id])), io))
        state = reply.states[0] if isinstance(reply, Sessions) else None
        if state is not None and _waiting(state, run_id):
            found: MNFuture[RunFuture | None] = MNFuture()
            if not kernel.post(kernel.watch, handle.id, run_id, found.set):
                raise AgentError(RUNTIME_STOPPED, "the runtime has stopped")
            future = found.get(timeout=io)
            if future is not None:
                return future.get(timeout=_left(end))
        kept = _kept(handle, kernel, run_id, io)  # it may have ended meanwhile
    except pykka.Timeout:
        raise PraxoError(RUNTIME_TIMEOUT, f"no result for {run_id!r} within {timeout} s") from None
    if kept is None:
        raise PraxoError(
            RUNTIME_UNKNOWN_RUN, f"session {handle.id!r} has no run {run_id!r} in its last 100"
        )
    return kept


def submitted_result(handle: SessionHandle, run_id: str) -> RunResult | None:
    """The result of ``run_id`` if it is the last run submitted through ``handle`` and it has
    completed (its outcome is then the one committed to the store); else None: the run is
    found as any other. The handle lets go of it either way once it has ended."""
    future = handle._submitted
    if future is None or future.run_id != run_id or not future.done():
        return None
    handle._submitted = None
    try:
        return future.get(timeout=0)
    except Exception:  # a failure is the store's to tell (the run may be resumed): look it up
        return None


def _waiting(state: StoredSession, run_id: str) -> bool:
    """Whether the store holds ``run_id`` to be run by its session: in progress, or accepted."""
    if state.pending is not None and state.pending.run_id == run_id:
        return True
    return any(run.run_id == run_id for run in state.inbox)


def check_result_args(run_id: object, timeout: object) -> None:
    """Refuse a run id that is not a non-empty str, or a timeout that is not a number >= 0.

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT``.
    """
    if not isinstance(run_id, str) or not run_id:
        raise PraxoError(RUNTIME_INVALID_INPUT, "run_id must be a non-empty str")
    check_timeout(timeout, none=True)


def _left(end: float | None) -> float | None:
    return None if end is None else max(0.0, end - time.monotonic())


def _ask(kernel: Kernel, message: bytes, timeout: float) -> Any:
    return kernel.ask_store(message).get(timeout=timeout)


def _kept(handle: SessionHandle, kernel: Kernel, run_id: str, timeout: float) -> RunResult | None:
    reply = decode(_ask(kernel, encode(LoadResults(handle.id)), timeout))
    if not isinstance(reply, Results):
        raise ProtocolError(PROTOCOL_INVALID_MESSAGE, "bad store reply")
    mine = []
    for document in reversed(reply.documents):  # newest first: a resumed run's last outcome
        try:
            doc = msgspec.json.decode(document)
        except msgspec.DecodeError:
            continue
        if not isinstance(doc, dict) or doc.get("run_id") != run_id:
            continue
        if not result_signed(doc, handle.id, kernel.host.key):
            raise CheckpointError(
                CHECKPOINT_SIGNATURE, f"the result kept for {run_id!r} is not signed"
            )
        mine.append(doc)
    # A completed run stays completed: a failure kept after it can only be a copy's that lost
    # (a cluster host whose session another host took over and committed the run for).
    completed = [
        d for d in mine if "error" not in d and d.get("status", "completed") == "completed"
    ]
    for doc in completed[:1] or mine[:1]:
        error = doc.get("error")
        if isinstance(error, dict):
            raise AgentError(str(error.get("code")), str(error.get("message", "")), run_id)
        session = Session(handle.id, handle.history(timeout=timeout))
        try:
            return RunResult(
                run_id=run_id,
                session=session,
                output=str(doc.get("output", "")),
                structured=_typed(handle, kernel, doc.get("agent"), doc.get("structured")),
                steps=int(doc.get("steps", 0)),
                model_calls=int(doc.get("model_calls", 0)),
                tool_calls=int(doc.get("tool_calls", 0)),
                usage=dict(doc.get("usage") or {}),
                status=str(doc.get("status", "completed")),
                interrupt=doc.get("interrupt"),
            )
        except (TypeError, ValueError):
            raise PraxoError(STORE_FAILED, f"the result kept for {run_id!r} is broken") from None
    return None


def _typed(handle: SessionHandle, kernel: Kernel, agent: object, value: object) -> object:
    """The kept structured ``value`` as an instance of its agent's output type.

    The agent is the one the document names (else the handle's). Without a type, or when the
    type no longer takes the value (it changed since the run), the JSON value as it is kept.
    """
    if value is None:
        return None
    name = agent if isinstance(agent, str) and agent else handle.agent
    kind = kernel.agents.output_type(name)
    if kind is None:
        return value
    try:
        return type_converter(kind)(value)
    except (msgspec.ValidationError, ValueError, TypeError):  # pydantic's is a ValueError
        return value
