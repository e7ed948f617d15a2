"""The run a session actor has in flight: its machine, its callback in flight, its events."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from praxo_actors._errors import AgentError
from praxo_actors.agent import AgentRun
from praxo_actors.agent._interrupt import PENDING_KEY
from praxo_actors.agent._run import resume_run
from praxo_actors.models import Event, Session
from praxo_actors.runtime._protocol import StartRun
from praxo_actors.runtime._session._durable import DurableRun

__all__ = ["Run", "interrupted_run"]


@dataclass(slots=True)
class Run:
    """The run in flight of one session (owned by its session actor)."""

    run: AgentRun
    agent: str
    deadline_ns: int | None
    clock: Any  # the runtime's clock, for the deadline
    cancelled: bool = False
    keep: bool = False  # cancelled by newer input: commit the steps it completed
    token: int = 0
    task: Any = None  # the asyncio task of the async callback in flight, if any
    events: list[Event] | None = None  # made by the first event: most of a run's time, none
    durable: DurableRun | None = None
    # A durable run's next move, waiting for the store to acknowledge its journal write.
    held: tuple[Any, ...] | None = None

    def add_event(self, event: Event) -> None:
        """Queue an event to publish at the next callback or the end of the run."""
        if self.events is None:
            self.events = []
        self.events.append(event)

    def take_events(self) -> list[Event] | None:
        """Return the events queued since the last call (None: none)."""
        events, self.events = self.events, None
        return events

    def stop_code(self) -> str | None:
        """Return the code to stop the run with at its next step (None: go on)."""
        if self.cancelled:
            return "AGENT_CANCELLED"
        deadline_ns = self.deadline_ns
        if deadline_ns is not None and self.clock.monotonic_ns() >= deadline_ns:
            return "AGENT_DEADLINE"
        return None

    def add_resumed(self) -> None:
        """Queue ``run.resumed`` where a resumed durable run goes live (once)."""
        if self.durable is not None:
            event = self.durable.resumed_event()
            if event is not None:
                self.add_event(event)


def interrupted_run(options: Any, session: Session, start: StartRun) -> AgentRun:
    """The run a ``resume`` goes on with: the session's interrupted one, if it is that run.

    Raises:
        AgentError: ``SESSION_NOT_INTERRUPTED``, and as :func:`~praxo_actors.agent.resume_agent`.
    """
    assert start.resume is not None
    raw = session.metadata.get(PENDING_KEY)
    if not isinstance(raw, dict) or raw.get("run_id") != start.run_id:
        raise AgentError(
            "SESSION_NOT_INTERRUPTED", "the session has no interrupted run", start.run_id
        )
    return resume_run(options, session, json.loads(start.resume))
