"""The run a session actor has in flight: its machine, its callback in flight, its events."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import AgentError, CheckpointError
from praxo_actors.agent import AgentRun, start_run
from praxo_actors.agent._caller import take
from praxo_actors.agent._effects import CallTool, Effect
from praxo_actors.agent._interpret import Call, Decision, Reply
from praxo_actors.agent._interpret import outcome as journaled_outcome
from praxo_actors.agent._interrupt import PENDING_KEY
from praxo_actors.agent._report import RunInterrupted
from praxo_actors.agent._run import resume_run
from praxo_actors.codes import (
    CHECKPOINT_SIGNATURE,
    SESSION_CONFLICT,
    SESSION_CRASHED,
    SESSION_NOT_INTERRUPTED,
    STORE_FAILED,
)
from praxo_actors.memory._log import PendingRun, pending_signed
from praxo_actors.models import Event, Session
from praxo_actors.runtime._protocol import StartRun
from praxo_actors.runtime._session._durable import MAX_RESUMES, DurableRun, resume_value

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["Run", "interrupted_run", "open_run", "resume_pending"]


class Run(AgentRun):
    """The run in flight of one session (owned by its session actor): its machine, as the
    :class:`~praxo_actors.agent.AgentRun` it was started as, and what the session keeps of it.

    One object, not an ``AgentRun`` and a record beside it: a run in flight is one object
    fewer for the collector to walk.
    """

    __slots__ = (
        "agent",
        "cancelled",
        "chain",
        "clock",
        "deadline_ns",
        "durable",
        "events",
        "held",
        "keep",
        "parent",
        "seq",
        "task",
        "token",
    )

    def __init__(
        self,
        run: AgentRun,
        agent: str,
        deadline_ns: int | None,
        clock: Any,
        durable: DurableRun | None = None,
        parent: str | None = None,
        chain: tuple[str, ...] = (),
    ) -> None:
        # Takes ``run``'s machine over where it stands (``run`` is dropped then).
        self._gen = run._gen
        self._result = run._result
        self.effect = run.effect
        self.run_id = run.run_id
        self.thrown = run.thrown
        self.agent = agent
        self.deadline_ns = deadline_ns
        self.clock = clock  # the runtime's clock, for the deadline
        self.cancelled = False
        self.keep = False  # cancelled by newer input: commit the steps it completed
        self.token = 0
        self.task: Any = None  # the asyncio task of the async callback in flight, if any
        self.events: list[Event] | None = None  # made by the first event: most runs, none
        self.durable = durable
        # A durable run's next move, waiting for the store to acknowledge its journal write.
        self.held: tuple[Any, ...] | None = None
        self.parent = parent  # the calling session of an agent tool's child run
        self.chain = chain  # every calling session of a child run (see StartRun.chain)
        self.seq = -1  # the seq of the last event queued (-1: none, or events are not built)

    def add_event(self, event: Event) -> None:
        """Queue an event to publish at the next callback or the end of the run."""
        if self.events is None:
            self.events = []
        self.events.append(event)
        self.seq = event.seq

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

    def before(self, effect: Effect, step: Decision) -> tuple[bytes | None, tuple[Any, ...]]:
        """Return a durable run's write to make before ``step`` (an ``at_most_once`` tool's
        start, or the result of one a crash cut off), and the move to make once it is stored."""
        durable = self.durable
        assert durable is not None
        if type(step) is Call:
            assert isinstance(effect, CallTool)
            return durable.started(effect), ("dispatch", step)
        assert type(step) is Reply and step.record
        return durable.completed(effect, step.value), ("advance", True, step.value)

    def after(self, ok: bool, value: Any) -> tuple[bytes | None, tuple[Any, ...]]:
        """Return the write journaling a callback's outcome (None: nothing to keep), and the
        move to make once it is stored: a durable run journals a result before it goes on."""
        effect, durable = self.effect, self.durable
        if durable is None or effect is None:
            return None, ("advance", ok, value)
        ok, value = journaled_outcome(effect, ok, value)
        write = durable.completed(effect, value) if ok else None  # an exception leaves none
        return write, ("advance", ok, value)

    def cut_off(self, code: str, message: str) -> RunInterrupted:
        """Stop waiting for the callback in flight (an async one is cancelled); return why."""
        self.token = 0  # tokens start at 1: whatever the callback still sends is stale
        self.held = None  # a journal write in flight no longer moves the run
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
        return RunInterrupted(code, message, self.run_id)

    def acknowledged(self, entries: int) -> tuple[Any, ...] | None:
        """Return the move held for the store's ``Journaled(entries)`` (None: not this write).

        ``entries`` -1 is a write the store failed, -2 one it skipped: the log no longer holds
        this run as pending (another host took the session over, and committed it or began
        another). Either fails the run.
        """
        durable = self.durable
        if self.held is None or durable is None or entries not in (durable.entries, -1, -2):
            return None
        move, self.held = self.held, None
        run_id = self.run_id
        if entries == -1:
            error = RunInterrupted(STORE_FAILED, "the run's journal was not stored", run_id)
            return ("advance", False, error)
        if entries == -2:
            error = RunInterrupted(SESSION_CONFLICT, "the run is no longer pending", run_id)
            return ("advance", False, error)
        return move

    def add_resumed(self) -> None:
        """Queue ``run.resumed`` where a resumed durable run goes live or ends (once)."""
        if self.durable is not None:
            for event in self.durable.resumed_events():
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
            SESSION_NOT_INTERRUPTED, "the session has no interrupted run", start.run_id
        )
    return resume_run(options, session, json.loads(start.resume))


def open_run(
    host: SessionHost, owner: Any, session_id: str, session: Session, start: StartRun
) -> Run:
    """Make the run ``start`` asks for (a durable one journals), suspended at its first effect.

    Raises:
        Exception: What making the agent's options or starting its run raised.
    """
    kernel = host.kernel
    options = kernel.agents.options_for(start.agent, kernel.bus.subscription_count > 0, owner)
    if start.resume is None:
        run = start_run(options, session, start.input, run_id=start.run_id)
    else:
        run = interrupted_run(options, session, start)
    take(start.run_id)  # the caller's context, if an untraced run left it
    current = Run(
        run, start.agent, start.deadline_ns, host.clock, parent=start.parent, chain=start.chain
    )
    if kernel.agents.is_durable(start.agent):
        current.durable = DurableRun(
            session_id, start.run_id, start.agent, start.input, host.key, resume=start.resume
        )
    return current


def resume_pending(
    host: SessionHost,
    owner: Any,
    session_id: str,
    session: Session,
    pending: PendingRun,
    journal: list[str],
) -> Run:
    """Start again the durable run the store holds pending, to be answered from its journal.

    Raises:
        CheckpointError: ``CHECKPOINT_SIGNATURE`` for a pending run not signed for this session,
            ``CHECKPOINT_INVALID`` for a broken one.
        AgentError: ``SESSION_CRASHED`` once cut off :data:`MAX_RESUMES` times.
        Exception: What making the agent's options or starting its run raised.
    """
    run_id = pending.run_id
    if not pending_signed(pending, session_id, host.key):
        # Written without the key (or for another session): not this session's run.
        raise CheckpointError(CHECKPOINT_SIGNATURE, "the pending run is not signed")
    if pending.resumes >= MAX_RESUMES:
        raise AgentError(SESSION_CRASHED, f"cut off {pending.resumes + 1} times", run_id)
    options = host.options_for(pending.agent, host.has_subscribers(), owner)
    if pending.resume is None:
        run = start_run(options, session, pending.input, run_id=run_id)
    else:
        run = resume_run(options, session, resume_value(pending.resume))
    durable = DurableRun(
        session_id,
        run_id,
        pending.agent,
        pending.input,
        host.key,
        journal,
        resumes=pending.resumes + 1,
        resume=pending.resume,
    )
    return Run(run, pending.agent, None, host.clock, durable=durable)
