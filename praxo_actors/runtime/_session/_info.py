"""What a session actor says of itself when asked (``GetInfo``)."""

from __future__ import annotations

from praxo_actors.agent._interrupt import PENDING_KEY
from praxo_actors.models import Session
from praxo_actors.runtime._protocol import Info
from praxo_actors.runtime._session._run import Run

__all__ = ["info_of"]


def info_of(
    session: Session | None, current: Run | None, last_agent: str | None, queued: int
) -> Info:
    """Describe a session: restored yet, its run in flight, its queue, its pending interrupt."""
    raw = None if session is None else session.metadata.get(PENDING_KEY)
    pending = raw if isinstance(raw, dict) else {}
    return Info(
        restored=session is not None,
        agent=current.agent if current is not None else last_agent,
        queued_runs=queued,
        running_run_id=None if current is None else current.run_id,
        messages=0 if session is None else len(session.messages),
        pending_interrupt=pending.get("payload"),
        pending_run_id=pending.get("run_id"),
    )
