"""``runtime.inspect(id)`` and ``runtime.sessions()``: what a session is doing, like BEAM's
``process_info``. Live sessions answer for themselves; passivated ones are read from the store."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal

import msgspec
import pykka

from praxo_actors._errors import PraxoError
from praxo_actors.agent._interrupt import PENDING_KEY
from praxo_actors.runtime._protocol import GetInfo, Info, LoadSessions, Sessions, decode, encode
from praxo_actors.runtime._restore import revive

if TYPE_CHECKING:
    from praxo_actors.runtime._runtime import Runtime

__all__ = ["SessionInfo", "SessionState", "inspect_session", "list_sessions", "pending_run_id"]

SessionState = Literal["live", "activating", "passivated", "unknown"]
_STATES = ("live", "activating", "passivated", "unknown")


class SessionInfo(msgspec.Struct, frozen=True):
    """A session at one moment.

    ``state``: ``live`` (an actor hosts it), ``activating`` (its actor is starting or restoring),
    ``passivated`` (only in the store) or ``unknown`` (nothing stored). ``agent`` is the agent of
    its current or last run in this process (None when it has not run here). ``messages``
    counts its committed messages. ``last_active_s`` is the seconds since it last ran or was
    routed to (None unless live or activating).
    """

    id: str
    state: SessionState
    agent: str | None = None
    queued_runs: int = 0
    running_run_id: str | None = None
    messages: int = 0
    pending_interrupt: Any = None
    last_active_s: float | None = None


def _left(end: float) -> float:
    return max(0.0, end - time.monotonic())


Found = tuple[SessionInfo, str | None]  # and the id of its interrupted run, if any


def _stored(runtime: Runtime, ids: list[str], end: float) -> list[Found]:
    if not ids:
        return []
    try:
        future = runtime._host.store_ref.ask(encode(LoadSessions(ids)), block=False)
        reply = decode(future.get(timeout=_left(end)))
    except pykka.ActorDeadError:
        raise PraxoError("RUNTIME_STOPPED", "the runtime has stopped") from None
    if not isinstance(reply, Sessions):
        raise PraxoError("PROTOCOL_INVALID_MESSAGE", "bad store reply")
    host = runtime._host
    out: list[Found] = []
    for sid, state in zip(ids, reply.states, strict=True):
        if state is None:
            out.append((SessionInfo(sid, "unknown"), None))
            continue
        interrupt = interrupted = None
        try:
            session, _ = revive(state, sid, host.allowed_types, host.key)
            messages = len(session.messages)
            raw = session.metadata.get(PENDING_KEY)
            if isinstance(raw, dict):
                interrupt, interrupted = raw.get("payload"), raw.get("run_id")
        except PraxoError:
            messages = 0  # unreadable: its next run fails with the checkpoint's code
        pending = state.pending
        info = SessionInfo(
            sid,
            "passivated",
            agent=None if pending is None else pending.agent,
            queued_runs=0,
            running_run_id=None if pending is None else pending.run_id,
            messages=messages,
            pending_interrupt=interrupt,
        )
        out.append((info, interrupted if isinstance(interrupted, str) else None))
    return out


def _live(runtime: Runtime, rows: list[tuple[str, Any, float, int]], end: float) -> list[Found]:
    asks = []
    for sid, ref, idle, pending in rows:
        future = None
        if ref is not None:
            try:
                future = ref.ask(encode(GetInfo()), block=False)
            except pykka.ActorDeadError:
                future = None
        asks.append((sid, future, idle, pending))
    out: list[Found] = []
    for sid, future, idle, pending in asks:
        info = None
        if future is not None:
            try:
                reply = decode(future.get(timeout=_left(end)))
                info = reply if isinstance(reply, Info) else None
            except pykka.ActorDeadError:
                info = None
        if info is None or not info.restored:
            found = SessionInfo(sid, "activating", queued_runs=pending, last_active_s=idle)
            out.append((found, None))
            continue
        found = SessionInfo(
            sid,
            "live",
            agent=info.agent,
            queued_runs=info.queued_runs,
            running_run_id=info.running_run_id,
            messages=info.messages,
            pending_interrupt=info.pending_interrupt,
            last_active_s=idle,
        )
        out.append((found, info.pending_run_id))
    return out


def inspect_session(runtime: Runtime, session_id: str, timeout: float) -> SessionInfo:
    """See :meth:`Runtime.inspect`."""
    return _inspect(runtime, session_id, timeout)[0]


def _inspect(runtime: Runtime, session_id: str, timeout: float) -> Found:
    if not isinstance(session_id, str) or not session_id:
        raise PraxoError("RUNTIME_INVALID_INPUT", "session id must be a non-empty str")
    _check_running(runtime)
    end = time.monotonic() + timeout
    try:
        rows = runtime._call(runtime._router.describe, [session_id], 1, timeout=timeout)
        if rows:
            return _live(runtime, rows, end)[0]
        return _stored(runtime, [session_id], end)[0]
    except pykka.Timeout:
        raise PraxoError("RUNTIME_TIMEOUT", f"no answer within {timeout} s") from None


def list_sessions(
    runtime: Runtime, state: str | None, limit: int, timeout: float
) -> list[SessionInfo]:
    """See :meth:`Runtime.sessions`."""
    if state is not None and state not in _STATES:
        raise PraxoError("RUNTIME_INVALID_INPUT", f"state must be one of {_STATES} or None")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise PraxoError("RUNTIME_INVALID_INPUT", "limit must be an int >= 0")
    _check_running(runtime)
    end = time.monotonic() + timeout
    out: list[SessionInfo] = []
    try:
        if state in (None, "live", "activating"):
            rows = runtime._call(runtime._router.describe, None, limit, timeout=timeout)
            out = [i for i, _ in _live(runtime, rows, end) if state is None or i.state == state]
        if state in (None, "passivated") and len(out) < limit:
            live = {i.id for i in out} | set(runtime._router.live)
            ids = [sid for sid in _stored_ids(runtime.store) if sid not in live]
            out.extend(i for i, _ in _stored(runtime, ids[: limit - len(out)], end))
    except pykka.Timeout:
        raise PraxoError("RUNTIME_TIMEOUT", f"no answer within {timeout} s") from None
    return out[:limit]


def pending_run_id(runtime: Runtime, session_id: str, timeout: float) -> str | None:
    """Return the id of the session's interrupted run (None: there is none)."""
    return _inspect(runtime, session_id, timeout)[1]


def _check_running(runtime: Runtime) -> None:
    # A stopped runtime may have closed its store: say so, rather than the store's ValueError.
    if runtime._stopped:
        raise PraxoError("RUNTIME_STOPPED", "the runtime has stopped")


def _stored_ids(store: Any) -> list[str]:
    """Every session id the store has a log for (heads, and 0.1 or snapshot-only sessions)."""
    from praxo_actors.memory._log import HEADS, SNAPSHOTS

    search = getattr(store, "search", None)
    if search is None:
        return []
    ids: dict[str, None] = {}
    for namespace in (HEADS, SNAPSHOTS):
        offset = 0
        while True:
            page = search(namespace, limit=1000, offset=offset)
            ids.update(dict.fromkeys(item.key for item in page))
            if len(page) < 1000:
                break
            offset += len(page)
    return sorted(ids)
