"""What a person can do from the observer: answer an approval, stop or passivate a session.

Each handler is a ``POST`` behind :class:`~praxo_actors.observer._guard.Guard` (same origin and
the page's token); each reads the session first, then calls the runtime's own public forms on a
worker thread, bounded by the app's ``timeout``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import msgspec

from praxo_actors._errors import PraxoError
from praxo_actors.core import redact_value

if TYPE_CHECKING:
    from praxo_actors.observer._runs import RunLog
    from praxo_actors.runtime import Runtime, SessionInfo

__all__ = ["answer_approval", "approval_of", "list_approvals", "stop_session"]

_SCAN = 100_000  # sessions looked at for pending approvals (the runtime's own session cap)


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
    except msgspec.DecodeError:
        raise PraxoError("RUNTIME_INVALID_INPUT", "the body must be JSON") from None


async def answer_approval(
    runtime: Runtime, runs: RunLog, session_id: str, request: Any, timeout: float
) -> dict[str, Any]:
    """Approve or deny (body ``{"approved": bool}``) what ``session_id`` waits for.

    Returns ``{"session_id", "run_id", "approved"}`` once the run is resumed (it goes on
    without the caller; its end shows in ``/api/runs``).

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a bad body; ``SESSION_NOT_INTERRUPTED``
            when the session waits for no approval; as :meth:`SessionHandle.resume`.
    """
    body = await _json_body(request)
    approved = body.get("approved") if isinstance(body, dict) else None
    if not isinstance(approved, bool):
        raise PraxoError("RUNTIME_INVALID_INPUT", 'the body must be {"approved": true|false}')
    info = await runtime.ainspect(session_id, timeout=timeout)
    if approval_of(info) is None or info.agent is None:
        raise PraxoError("SESSION_NOT_INTERRUPTED", f"{session_id!r} waits for no approval")
    handle = runtime.session(session_id, agent=info.agent)
    # The run it resumes, as the observer's log has it (the resume's future learns the id on
    # the loop, later).
    waiting = runs.runs(status="interrupted", session_id=session_id, limit=1)
    run_id = waiting[0]["run_id"] if waiting else None
    await asyncio.to_thread(handle.resume, approved, None, timeout)
    return {"session_id": session_id, "run_id": run_id, "approved": approved}


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
