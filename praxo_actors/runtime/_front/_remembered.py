"""``runtime.session(id)`` with no agent: the agent the session was last run with.

A live session's is the agent of the last run routed to it (the runtime's loop knows it); any
other's is read from its log in the store: the newest of its accepted durable runs, its run in
progress, or the head, which names the agent of the last run committed. A session with none of
these (a new one) is run by ``"default"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praxo_actors._errors import PraxoError
from praxo_actors.memory._log import SessionLog
from praxo_actors.runtime._front._on_loop import on_loop

if TYPE_CHECKING:
    from praxo_actors.runtime._front._runtime import Runtime

__all__ = ["DEFAULT_AGENT", "remembered_agent"]

DEFAULT_AGENT = "default"


def remembered_agent(runtime: Runtime, session_id: str) -> str:
    """Return the agent session ``session_id`` was last run with (``"default"``: none).

    Off the runtime's loop this waits for the loop's answer (bounded by the runtime's
    ``timeout``); the store is read on the caller's thread (a few rows).

    Raises:
        PraxoError: ``RUNTIME_TIMEOUT``; the store's own code (``STORE_FAILED``).
    """
    kernel = runtime._kernel
    try:
        if on_loop(kernel.host):
            live = kernel.agent_of(session_id)
        else:
            live = kernel.call(kernel.agent_of, session_id, timeout=kernel.timeout)
    except PraxoError as exc:
        if exc.code == "RUNTIME_STOPPED":  # its runs fail with that code; no store to read
            return DEFAULT_AGENT
        raise
    if live is not None:
        return live
    state = SessionLog(runtime.store).load([session_id])[0]
    if state is None:
        return DEFAULT_AGENT
    if state.inbox:
        return state.inbox[-1].agent or DEFAULT_AGENT
    if state.pending is not None and state.pending.agent:
        return state.pending.agent
    return state.agent or DEFAULT_AGENT
