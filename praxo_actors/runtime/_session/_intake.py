"""How runs come into a session actor: named, queued, accepted, queued again, resumed.

:class:`SessionIntake` is a base of :class:`~praxo_actors.runtime._session._session.SessionActor`:
its methods are the actor's, on the actor's thread, with no call added in between. A run sent
to the session is named (the agent it was last run with) and queued, a durable one first put
in the session's inbox in the store; after a restore, the store's pending run is resumed from
its journal and its accepted runs are queued again, in order.
"""

from __future__ import annotations

import msgspec
import pykka

from praxo_actors._errors import CheckpointError
from praxo_actors.codes import CHECKPOINT_SIGNATURE
from praxo_actors.memory._inbox import AcceptedRun
from praxo_actors.memory._log import PendingRun
from praxo_actors.runtime._kernel._agents import DEFAULT_AGENT
from praxo_actors.runtime._protocol import StartRun, encode
from praxo_actors.runtime._session._deadlines import Deadlines
from praxo_actors.runtime._session._guard import enter
from praxo_actors.runtime._session._held import held_session
from praxo_actors.runtime._session._inbox import accept_write, start_of
from praxo_actors.runtime._session._run import resume_pending
from praxo_actors.runtime._session._running import SessionRuns

__all__ = ["SessionIntake"]


class SessionIntake(SessionRuns):
    """Take a session's runs in: name, queue, accept, requeue, resume (a base of the actor)."""

    def _named(self, start: StartRun) -> StartRun:
        """Name the agent of a run that names none: the newest run's waiting or in flight, else
        the last run committed's (as the log's head keeps it: a run that failed changed
        nothing), else the default.

        The kernel knows a durable run's start (to send it again after a crash); a run
        submitted as possibly durable whose agent is not durable lets its ``submit`` return.
        """
        host = self.host
        if self.queue:
            agent = self.queue[-1].agent  # the newest run waiting
        elif self.current is not None:
            agent = self.current.agent  # the run in flight
        else:
            agent = self._committed_agent or DEFAULT_AGENT
        start = msgspec.structs.replace(start, agent=agent)
        if host.router.agents.is_durable(agent):
            if not start.journal:
                host.post(host.router.started_as, start.run_id, encode(start))
        elif start.journal:
            host.post(host.router.saved, [], [], [(start.run_id, None)])
        return start

    def _enqueue(self, start: StartRun) -> None:
        """Queue a run (arming its deadline); start it if nothing runs."""
        if self.queue is None:
            self.queue = []
        self.queue.append(start)
        if start.deadline_ns is not None:
            if self._deadlines is None:
                self._deadlines = Deadlines(self.host, self.actor_ref)
            self._deadlines.arm(start.run_id, start.deadline_ns)
        if self.current is None:
            self._start_next()

    def _accept(self, start: StartRun) -> None:
        """Put a submitted durable run in the session's inbox in the store (one write, gathered
        with others by the store actor); the store's answer lets ``submit`` return."""
        host = self.host
        if not host.router.agents.is_durable(start.agent):
            return
        if self._inbox is None:
            self._inbox = set()
        self._inbox.add(start.run_id)
        try:
            self.store.tell(accept_write(host, self.session_id, start))
        except pykka.ActorDeadError:
            host.post(host.router.saved, [], [], [(start.run_id, "STORE_FAILED")])

    def _requeue(self, inbox: list[AcceptedRun], pending: PendingRun | None) -> None:
        """Queue again, in order, the accepted runs the store's inbox holds (after the pending
        run, resumed already): each runs once, under its own id."""
        host = self.host
        for run in inbox:
            run_id = run.run_id
            if (pending is not None and run_id == pending.run_id) or (
                self._inbox is not None and run_id in self._inbox
            ):
                continue
            if self._resumed is None:
                self._resumed = set()
            self._resumed.add(run_id)
            if self._inbox is None:
                self._inbox = set()
            self._inbox.add(run_id)
            if self._last_agent is None:
                self._last_agent = run.agent
            host.post(host.router.resumed, self.session_id, run_id)
            start = start_of(host, self.session_id, run)
            if start is None:
                forged = CheckpointError(CHECKPOINT_SIGNATURE, "the accepted run is not signed")
                self._failed(run_id, forged)
                continue
            self._enqueue(start)

    def _resume(self, pending: PendingRun, journal: list[str]) -> None:
        """Start again the durable run the store holds, answering its effects from the journal."""
        host = self.host
        run_id = pending.run_id
        self._last_agent = pending.agent
        host.post(host.router.resumed, self.session_id, run_id)
        if self._resumed is None:
            self._resumed = set()
        self._resumed.add(run_id)
        assert self.session is not None
        session = self.session = held_session(self.session, self.session_id)
        opened, current = enter(
            resume_pending, host, self, self.session_id, session, pending, journal
        )
        if not opened:
            self._failed(run_id, current, pending.entries)
            return
        self.current = current
        # The resume is counted in the store before anything runs again, so a call made again
        # knows its attempt even when this process dies too.
        assert current.durable is not None
        self._journal(current, current.durable.marker(), ("start",))
