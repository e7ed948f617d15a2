"""``handle.agent`` of a handle naming no agent: the agent the session was last run with.

The session names the agent of each such run itself (the newest run waiting or in flight
before it, else the last run committed). This reads the same from outside: a live session with
runs pending, the agent of the newest routed to it that named one (the runtime's loop knows
it); else its log in the store: the newest of its accepted durable runs, its run in progress,
or the head, which names the agent of the last run committed. A session with none of these (a
new one) is run by ``"default"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pykka

from praxo_actors._errors import PraxoError, ProtocolError
from praxo_actors.codes import PROTOCOL_INVALID_MESSAGE, RUNTIME_TIMEOUT
from praxo_actors.memory._log import SessionLog, StoredSession
from praxo_actors.runtime._front._on_loop import on_loop
from praxo_actors.runtime._kernel._agents import DEFAULT_AGENT
from praxo_actors.runtime._protocol import LoadSessions, Sessions, decode, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._front._runtime import Runtime

__all__ = ["remembered_agent"]


def remembered_agent(runtime: Runtime, session_id: str) -> str:
    """Return the agent session ``session_id`` was last run with (``"default"``: none).

    Off the runtime's loop this waits for the loop's answer and then the store's, each bounded
    by the runtime's ``timeout``. On the loop (which must not wait for itself, and runs the
    in-memory store's actor) the loop's state is read at once and the store on this thread.

    Raises:
        PraxoError: ``RUNTIME_TIMEOUT``; ``PROTOCOL_INVALID_MESSAGE``; the store's own code.
    """
    kernel = runtime._kernel
    here = on_loop(kernel.host)
    try:
        if here:
            live = kernel.agent_of(session_id)
        else:
            live = kernel.call(kernel.agent_of, session_id, timeout=kernel.timeout)
        if live is not None:
            return live
        if here:
            state = SessionLog(runtime.store).load([session_id])[0]
        else:
            reply = kernel.ask_store(encode(LoadSessions([session_id])))
            state = _state(decode(reply.get(timeout=kernel.timeout)))
    except pykka.Timeout:
        raise PraxoError(
            RUNTIME_TIMEOUT, f"the store did not answer within {kernel.timeout} s"
        ) from None
    except PraxoError as exc:
        if exc.code == "RUNTIME_STOPPED":  # its runs fail with that code; no store to read
            return DEFAULT_AGENT
        raise
    if state is None:
        return DEFAULT_AGENT
    if state.inbox:
        return state.inbox[-1].agent or DEFAULT_AGENT
    if state.pending is not None and state.pending.agent:
        return state.pending.agent
    return state.agent or DEFAULT_AGENT


def _state(reply: object) -> StoredSession | None:
    if not isinstance(reply, Sessions) or len(reply.states) != 1:
        raise ProtocolError(PROTOCOL_INVALID_MESSAGE, "bad store reply")
    return reply.states[0]
