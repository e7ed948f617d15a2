"""What a person can do from the observer: answer an approval, stop or passivate a session.

Each handler is a ``POST`` behind :class:`~praxo_actors.observer._guard.Guard` (same origin and
the page's token); each reads the session first, then calls the runtime's own public forms on a
worker thread, bounded by the app's ``timeout``. An answer to an approval is 200 only once its
decision took effect (the run went on), so of concurrent answers only one is.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import msgspec

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.codes import RUNTIME_INVALID_INPUT, RUNTIME_TIMEOUT, SESSION_NOT_INTERRUPTED
from praxo_actors.core import redact_value

if TYPE_CHECKING:
    from praxo_actors.observer._runs import RunLog
    from praxo_actors.runtime import Runtime, SessionInfo

__all__ = ["Answers", "answer_approval", "approval_of", "list_approvals", "stop_session"]

_SCAN = 100_000  # sessions looked at for pending approvals (the runtime's own session cap)

# Codes of a resume refused before its run went on: its decision took no effect.
_REFUSED = frozenset(
    {
        "SESSION_NOT_INTERRUPTED",
        "AGENT_INVALID_RESUME",
        "RUNTIME_INVALID_INPUT",
        "RUNTIME_TIMEOUT",
        "RUNTIME_STOPPED",
        "STORE_FAILED",
        "SESSION_CONFLICT",
    }
)


class Answers:
    """The answers to approvals in progress, one per session at a time (on the app's loop)."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    @contextlib.asynccontextmanager
    async def one_at_a_time(self, session_id: str) -> AsyncIterator[None]:
        """Hold the session's turn to answer its approval."""
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        self._users[session_id] = self._users.get(session_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[session_id] -= 1
            if not self._users[session_id]:  # bounded: only sessions being answered now
                del self._users[session_id], self._locks[session_id]


def approval_of(info: SessionInfo) -> dict[str, Any] | None:
    """Return the approval ``info``'s session waits for (None when it waits for none)."""
    payload = info.pending_interrupt
    if not isinstance(payload, dict):
        return None
    approval = payload.get("approval")
    return approval if isinstance(approval, dict) else None


async def list_approvals(
    runtime: Runtime, runs: RunLog, show_arguments: bool, timeout: float
) -> list[dict[str, Any]]:
    """Return every pending approval, its arguments PII-redacted unless ``show_arguments``."""
    out = []
    for info in await runtime.asessions(None, _SCAN, timeout=timeout):
        approval = approval_of(info)
        if approval is None:
            continue
        waiting = runs.runs(status="interrupted", session_id=info.id, limit=1)
        arguments = approval.get("arguments")
        out.append(
            {
                "session_id": info.id,
                "agent": info.agent,
                "run_id": waiting[0]["run_id"] if waiting else None,
                "state": info.state,
                "tool": approval.get("tool"),
                "call_id": approval.get("call_id"),
                "arguments": arguments if show_arguments else redact_value(arguments, keys=True),
                "arguments_redacted": not show_arguments,
            }
        )
    return out


async def _json_body(request: Any) -> Any:
    raw = await request.body()
    try:
        return msgspec.json.decode(raw) if raw else {}
    except (msgspec.DecodeError, RecursionError):  # (RecursionError: nested too deep)
        raise PraxoError(RUNTIME_INVALID_INPUT, "the body must be JSON") from None


async def answer_approval(
    runtime: Runtime,
    runs: RunLog,
    session_id: str,
    request: Any,
    timeout: float,
    answers: Answers | None = None,
) -> dict[str, Any]:
    """Approve or deny (body ``{"approved": bool}``) what ``session_id`` waits for.

    Returns ``{"session_id", "run_id", "approved"}`` once the decision took effect: the run
    went on (it goes on without the caller; its end shows in ``/api/runs``). Answers to one
    session are taken one at a time (``answers``), and each waits for its own to take effect
    or be refused, so of concurrent answers only one returns.

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a bad body; ``SESSION_NOT_INTERRUPTED``
            when the session waits for no approval (another answer took it); as
            :meth:`SessionHandle.resume`; ``RUNTIME_TIMEOUT`` when the run neither went on
            nor was refused within ``timeout``.
    """
    body = await _json_body(request)
    approved = body.get("approved") if isinstance(body, dict) else None
    if not isinstance(approved, bool):
        raise PraxoError(RUNTIME_INVALID_INPUT, 'the body must be {"approved": true|false}')
    async with (answers or Answers()).one_at_a_time(session_id):
        info = await runtime.ainspect(session_id, timeout=timeout)
        if approval_of(info) is None or info.agent is None:
            raise AgentError(SESSION_NOT_INTERRUPTED, f"{session_id!r} waits for no approval")
        handle = runtime.session(session_id, agent=info.agent)
        run_id = await _resume(runs, handle, approved, timeout)
    return {"session_id": session_id, "run_id": run_id, "approved": approved}


async def _resume(runs: RunLog, handle: Any, approved: bool, timeout: float) -> str:
    """Resume the session's run and return once it went on (its ``run.resumed``) or ended:
    the run's id (the interrupted run's, which the resume's future holds by then, whether or
    not the observer's log saw that run).

    Raises:
        PraxoError: The resume's refusal (see :data:`_REFUSED`); ``RUNTIME_TIMEOUT``.
    """
    loop = asyncio.get_running_loop()
    went_on = asyncio.Event()

    def told() -> None:
        loop.call_soon_threadsafe(went_on.set)

    forget = runs.on_resumed(handle.id, told)
    try:
        future = handle.resume(approved, None, timeout)
        ended = asyncio.ensure_future(_settled(future))
        resumed = asyncio.ensure_future(went_on.wait())
        try:
            await asyncio.wait({ended, resumed}, timeout=timeout, return_when="FIRST_COMPLETED")
        finally:
            ended.cancel()
            resumed.cancel()
    finally:
        forget()
    if went_on.is_set():
        return str(future.run_id)
    if not future.done():
        raise PraxoError(RUNTIME_TIMEOUT, f"the run did not go on within {timeout} s")
    try:
        future.get(timeout=0)
    except PraxoError as exc:
        if exc.code in _REFUSED:
            raise
    # It went on and ended (its end shows in /api/runs) before its run.resumed reached the log.
    return str(future.run_id)


async def _settled(future: Any) -> None:
    with contextlib.suppress(Exception):
        await future


async def stop_session(
    runtime: Runtime, session_id: str, how: str, timeout: float
) -> dict[str, Any]:
    """Stop (``how="stop"``) or passivate the session; return ``{"session_id", how: bool}``.

    False: it was not live (or, to passivate, not idle).
    """
    info = await runtime.ainspect(session_id, timeout=timeout)
    done = False
    if info.agent is not None and info.state in ("live", "activating"):
        handle = runtime.session(session_id, agent=info.agent)
        method = handle.stop if how == "stop" else handle.passivate
        done = await asyncio.to_thread(method, timeout)
    return {"session_id": session_id, "stopped" if how == "stop" else "passivated": done}
