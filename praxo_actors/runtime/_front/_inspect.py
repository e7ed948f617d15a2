"""``runtime.inspect(id)`` and ``runtime.sessions()``: what a session is doing, like BEAM's
``process_info``. Live sessions answer for themselves; passivated ones are read from the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import msgspec
import pykka

from praxo_actors._errors import AgentError, PraxoError, ProtocolError
from praxo_actors.actors import MNFuture, in_thread
from praxo_actors.agent._interrupt import PENDING_KEY
from praxo_actors.codes import PROTOCOL_INVALID_MESSAGE, RUNTIME_INVALID_INPUT, RUNTIME_STOPPED
from praxo_actors.runtime._protocol import GetInfo, Info, LoadSessions, Sessions, decode, encode
from praxo_actors.runtime._session._restore import revive

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = [
    "SessionInfo",
    "SessionState",
    "check_session_id",
    "find",
    "interrupted_run",
    "list_sessions",
    "list_states",
]

SessionState = Literal["live", "activating", "passivated", "unknown"]
_STATES = ("live", "activating", "passivated", "unknown")


class SessionInfo(msgspec.Struct, frozen=True):
    """A session at one moment.

    ``state``: ``live`` (an actor hosts it), ``activating`` (its actor is starting or restoring),
    ``passivated`` (only in the store) or ``unknown`` (nothing stored). ``agent`` is the agent of
    its current or last run (kept in the store: None only when it has never run one). ``messages``
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


Found = tuple[SessionInfo, str | None]  # and the id of its interrupted run, if any


async def _stored(kernel: Kernel, ids: list[str]) -> list[Found]:
    if not ids:
        return []
    reply = decode(await kernel.ask_store(encode(LoadSessions(ids))))
    if not isinstance(reply, Sessions):
        raise ProtocolError(PROTOCOL_INVALID_MESSAGE, "bad store reply")
    host = kernel.host
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
            agent=state.agent if pending is None else pending.agent,
            queued_runs=0,
            running_run_id=None if pending is None else pending.run_id,
            messages=messages,
            pending_interrupt=interrupt,
        )
        out.append((info, interrupted if isinstance(interrupted, str) else None))
    return out


async def _live(rows: list[tuple[str, Any, float, int]]) -> list[Found]:
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
                reply = decode(await future)
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


def check_session_id(session_id: object) -> None:
    """Refuse a session id that is not a non-empty str (``RUNTIME_INVALID_INPUT``)."""
    if not isinstance(session_id, str) or not session_id:
        raise PraxoError(RUNTIME_INVALID_INPUT, "session id must be a non-empty str")


async def find(kernel: Kernel, session_id: str) -> Found:
    """Describe one session and name its interrupted run (on the runtime's loop thread)."""
    _check_running(kernel)
    rows = kernel.describe([session_id], 1)
    if rows:
        return (await _live(rows))[0]
    return (await _stored(kernel, [session_id]))[0]


async def interrupted_run(kernel: Kernel, session_id: str) -> str | None:
    """Return the id of the session's interrupted run, None if it has none (on the loop).

    A session still activating is asked once it is live, so that its restored log answers.
    """
    if kernel.is_live(session_id):
        ready: MNFuture[pykka.ActorRef[Any] | None] = MNFuture()
        kernel.when_ready(session_id, ready.set)
        await ready
    return (await find(kernel, session_id))[1]


def list_states(state: str | None, limit: int) -> None:
    """Refuse a bad ``state`` or ``limit`` of :meth:`Runtime.sessions`."""
    if state is not None and state not in _STATES:
        raise PraxoError(RUNTIME_INVALID_INPUT, f"state must be one of {_STATES} or None")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise PraxoError(RUNTIME_INVALID_INPUT, "limit must be an int >= 0")


async def list_sessions(kernel: Kernel, state: str | None, limit: int) -> list[SessionInfo]:
    """See :meth:`Runtime.sessions` (on the runtime's loop thread)."""
    _check_running(kernel)
    out: list[SessionInfo] = []
    if state in (None, "live", "activating"):
        rows = kernel.describe(None, limit)
        out = [i for i, _ in await _live(rows) if state is None or i.state == state]
    if state in (None, "passivated") and len(out) < limit:
        # Read off the loop: a store's search may block (SQLite).
        stored = await in_thread(lambda: _stored_ids(kernel.store))
        ids = [sid for sid in stored if not kernel.is_live(sid) and sid not in {i.id for i in out}]
        out.extend(i for i, _ in await _stored(kernel, ids[: limit - len(out)]))
    return out[:limit]


def _check_running(kernel: Kernel) -> None:
    # A stopped runtime may have closed its store: say so, rather than the store's ValueError.
    if kernel.stopping:
        raise AgentError(RUNTIME_STOPPED, "the runtime has stopped")


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
