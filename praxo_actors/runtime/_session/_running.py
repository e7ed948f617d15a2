"""A session actor's runs in flight: their steps, their effects, their ends.

:class:`SessionRuns` is a base of :class:`~praxo_actors.runtime._session._session.SessionActor`:
its methods are the actor's, on the actor's thread, with no call added in between. It starts the
queued runs in order, feeds each machine its outcomes until a call must be waited for, publishes
the run's events, journals a durable run's steps, and commits (or fails) each run as it ends.
"""

from __future__ import annotations

import contextlib
import functools
from sys import intern
from typing import TYPE_CHECKING, Any

import msgspec
import pykka

from praxo_actors._errors import AgentError
from praxo_actors.actors import MNActor
from praxo_actors.agent._effects import Emit
from praxo_actors.agent._interpret import Call, Reply, decide
from praxo_actors.codes import AGENT_DEADLINE
from praxo_actors.memory._log import Commit
from praxo_actors.models import Event, Session
from praxo_actors.runtime._protocol import CommitRun, StartRun, encode
from praxo_actors.runtime._session._calls import start_call
from praxo_actors.runtime._session._deadlines import Deadlines
from praxo_actors.runtime._session._guard import enter, failed_event, unreported
from praxo_actors.runtime._session._held import (
    ENCODED_MESSAGES,
    decode_messages,
    encode_messages,
    held_session,
)
from praxo_actors.runtime._session._publish import publish, publish_delta
from praxo_actors.runtime._session._restore import (
    LogPosition,
    partial_commit,
    result_document,
    run_commit,
)
from praxo_actors.runtime._session._run import Run, open_run

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["RUNTIME", "SessionRuns", "kept_as_is"]

RUNTIME = "RUNTIME_STOPPED"


class SessionRuns(MNActor):
    """Run the queued runs one at a time, to their commit or failure (a base of the actor)."""

    host: SessionHost
    session_id: str
    store: pykka.ActorRef[Any]
    bus: pykka.ActorRef[Any] | None
    session: Session | bytes | None  # bytes: an idle session's short conversation (_held)
    position: LogPosition | None
    queue: list[StartRun] | None
    current: Run | None
    _next_token: int
    _deadlines: Deadlines | None
    _resumed: set[str] | None
    _inbox: set[str] | None
    _last_agent: str | None
    _committed_agent: str | None
    # The code its runs end with once told StopRuns (its stop follows); a class default, so
    # that an idle session holds no field for it.
    _stopping: str | None = None

    def _failed(self, run_id: str, error: BaseException, journal: int = -1) -> None:
        """Fail a run; ``journal``: the entries of its journal to drop (a durable run ended;
        -2: keep nothing, the run's end is committed already or the run is as it was).

        An accepted run leaves the inbox with this commit (it never began, or began and ended).
        """
        inbox = run_id if self._inbox is not None and run_id in self._inbox else None
        self._ended(run_id)
        host = self.host
        host.post(host.router.failed, run_id, error)
        if self._stopping == RUNTIME:
            # A runtime's stop writes nothing: a durable run stays journaled, and an accepted
            # one in the inbox, to run again after the restart.
            return
        if journal == -2:
            if inbox is not None:
                self._to_store(encode(CommitRun(Commit(self.session_id, inbox=inbox))))
            return
        # Kept for handle.result(run_id): the last runs' outcomes, failures too. The commit
        # names no run: the run is settled already, and its id may be pending again (resumed)
        # by the time the store answers, which must not settle that later run; it names the
        # run it ends, so a durable run's pending entry goes too (it must not be resumed).
        # Reading the error's code and text is a call into user code (an exception of theirs).
        kept, document = enter(result_document, None, error, run_id, self.session_id, host.key)
        if not kept:
            document = None
        if document is not None or journal >= 0 or inbox is not None:
            ends = run_id if journal >= 0 else None
            commit = Commit(
                self.session_id,
                result=document,
                journal=journal,
                inbox=inbox,
                ends=ends,
                kept=run_id if document is not None else None,
            )
            self._to_store(encode(CommitRun(commit)))

    def _to_store(self, message: bytes, run_id: str | None = None) -> None:
        """Tell the store actor a write, directly; a dead store fails ``run_id`` (STORE_FAILED)."""
        try:
            self.store.tell(message)
        except pykka.ActorDeadError:
            if run_id is not None:
                self.host.post(self.host.router.saved, [(run_id, "STORE_FAILED")], [])

    def _ended(self, run_id: str) -> None:
        """Forget what a run that ended held: its deadline, its mark as resumed (a resume of
        an interrupted run goes on under the same id and must not be taken for a repeat)."""
        self._disarm(run_id)
        if self._resumed is not None:
            self._resumed.discard(run_id)
            if not self._resumed:
                self._resumed = None
        if self._inbox is not None:
            self._inbox.discard(run_id)
            if not self._inbox:
                self._inbox = None

    def _disarm(self, run_id: str) -> None:
        if self._deadlines is not None and self._deadlines.disarm(run_id):
            self._deadlines = None

    # -- running ---------------------------------------------------------------------------

    def _start_next(self) -> None:
        host = self.host
        while self.current is None and self.queue and self._stopping is None:
            start = self.queue.pop(0)
            if not self.queue:
                self.queue = None
            deadline_ns = start.deadline_ns
            if deadline_ns is not None and host.clock.monotonic_ns() >= deadline_ns:
                error = AgentError(AGENT_DEADLINE, "deadline passed while queued", start.run_id)
                self._failed(start.run_id, error, kept_as_is(start))
                continue
            session = self.session
            if isinstance(session, bytes):  # idle, its short conversation encoded (see _held)
                session = self.session = Session(self.session_id, decode_messages(session))
            assert session is not None
            # The agent's factory, and the run's start up to its first effect (instructions):
            # user code, guarded as ``enter`` guards it (inline: the path of every run).
            try:
                current = open_run(host, self, self.session_id, session, start)
            except BaseException as exc:
                self._failed(start.run_id, exc, kept_as_is(start))
                continue
            # Interned: each of many idle sessions then holds its agent's name as one shared
            # string, not a copy decoded from its StartRun.
            self._last_agent = intern(start.agent)
            self.current = current
            if current.durable is not None and self._inbox is not None:
                # From the inbox: its first journal write takes it out (it is pending then).
                current.durable.accepted = start.run_id in self._inbox
            self._advance(current, True, None, first=True)

    def _advance(self, current: Run, ok: bool, value: Any, first: bool = False) -> None:
        """Feed an outcome into the machine and answer effects until a call must be waited for.

        The machine's steps call user code (instructions, structured-output types, approval
        checks), so they run inside the guard: whatever they raise ends this run only.
        """
        run = current
        error: BaseException | None = None
        try:  # as ``enter`` (inline: the path of every run)
            if self._steps(current, ok, value, first):
                return
        except BaseException as exc:  # AgentError with a code, or user code's own, unchanged
            error = exc
        if current.durable is not None:
            current.add_resumed()
        if error is None:
            self._complete(current)
            return
        if current.seq >= 0 and unreported(error, run.thrown):
            current.add_event(failed_event(run.run_id, self.session_id, current.seq, error))
        if current.events is not None:
            self._publish(current)
        self.current = None
        durable = current.durable
        journal = -1 if durable is None else durable.entries
        keep = current.keep and isinstance(error, AgentError)
        partial = getattr(error, "partial", None) if keep else None
        if partial is not None and self._keep_partial(run.run_id, partial, error, journal):
            journal = -2  # the partial commit holds the run's end
        self._failed(run.run_id, error, journal)
        self._start_next()

    def _steps(self, current: Run, ok: bool, value: Any, first: bool) -> bool:
        """Run the machine until it waits (True: for a call or a write) or completes."""
        run = current
        durable = current.durable
        effect = run.effect if first else (run.send(value) if ok else run.throw(value))
        while effect is not None:
            deltas = self._publish_delta
            if current.parent is not None:  # a child run's deltas name its caller
                deltas = functools.partial(
                    publish_delta, self.host, self.bus, parent=current.parent
                )
            step = decide(effect, durable, current.stop_code, deltas)
            if type(step) is Emit:
                current.add_event(step.event)
                effect = run.send(None)
            elif type(step) is Reply and not step.record:
                effect = run.send(step.value)
            else:  # a call to wait for, or a durable run's write for the store to have first
                if durable is not None:
                    current.add_resumed()
                if type(step) is Call and not step.started:
                    self._dispatch(current, step)
                else:
                    self._journal(current, *current.before(effect, step))
                return True
        return False

    def _keep_partial(
        self, run_id: str, partial: Session, error: BaseException, journal: int
    ) -> bool:
        """Commit the steps a run cancelled by newer input completed (``on_busy="interrupt"``)."""
        assert self.session is not None and self.position is not None
        host = self.host
        before = held_session(self.session, self.session_id)
        commit = partial_commit(
            self.position, before, partial, error, run_id, self.session_id, host.key, journal
        )
        if commit is None:
            return False
        self.session = partial
        self._to_store(encode(CommitRun(commit)))
        return True

    def _complete(self, current: Run) -> None:
        host = self.host
        result = current.result
        if current.events is not None:
            self._publish(current)
        self.current = None
        before = self.session
        assert type(before) is Session and self.position is not None  # opened at its start
        durable = current.durable
        journal = -1 if durable is None else durable.entries
        # Writing the result is a call into user code too (a structured-output type's
        # encoding), guarded as ``enter`` guards it.
        try:
            commit = run_commit(self.position, before, result, host.key, journal, current.agent)
        except BaseException as exc:  # e.g. metadata that is not JSON: the run cannot be kept
            self._failed(result.run_id, exc)
            self._start_next()
            return
        if self._inbox is not None and result.run_id in self._inbox and journal <= 0:
            # Accepted, and ended with no journal entry to take it out (its agent is no longer
            # durable): the commit does.
            commit = msgspec.structs.replace(commit, inbox=result.run_id)
        # Commit: the run completed and its record is written.
        session = self.session = result.session
        if not self.queue and len(session.messages) <= ENCODED_MESSAGES and not session.metadata:
            # Going idle with a short conversation: held encoded until its next run (_held).
            with contextlib.suppress(msgspec.EncodeError, TypeError, OverflowError):
                self.session = encode_messages(session.messages)
        if current.agent:
            self._committed_agent = intern(current.agent)
        if self._deadlines is not None or self._resumed is not None or self._inbox is not None:
            self._ended(result.run_id)
        # The result to the kernel, the commit straight to the store: the store's reply to
        # the loop settles the run's future with it (whichever of the two arrives first).
        host.gate.post(host.kernel.completed, result.run_id, result)
        self._to_store(encode(CommitRun(commit)), result.run_id)
        if self.queue:
            self._start_next()

    def _dispatch(self, current: Run, call: Call) -> None:
        """Start a callback; its outcome returns inside an EffectDone message."""
        if current.events is not None:
            self._publish(current)
        self._next_token += 1
        token = current.token = self._next_token
        run_id = current.run_id
        current.task = start_call(self.host, self.actor_ref, run_id, token, call, current.chain)

    def _publish(self, current: Run) -> None:
        events = current.take_events()  # callers skip a run with none queued
        if events:
            publish(self.host, self.bus, events, current.parent)

    def _publish_delta(self, event: Event) -> None:
        publish_delta(self.host, self.bus, event)

    def _journal(self, current: Run, write: bytes | None, move: tuple[Any, ...]) -> None:
        """Send a journal write; make ``move`` once the store has it (at once if no write)."""
        if write is None:  # a value that is not JSON: nothing to keep, the run fails on it
            self._move(current, move)
            return
        current.held = move
        self._to_store(write)

    def _journaled(self, run_id: str, entries: int) -> None:
        current = self.current
        if current is not None and current.run_id == run_id:
            move = current.acknowledged(entries)
            if move is not None:
                self._move(current, move)

    def _move(self, current: Run, move: tuple[Any, ...]) -> None:
        if move[0] == "advance":
            self._advance(current, move[1], move[2])
        elif move[0] == "start":
            self._advance(current, True, None, first=True)
        else:
            self._dispatch(current, move[1])


def kept_as_is(start: StartRun) -> int:
    """What a run that fails before it starts keeps: a resume nothing (``-2``), as its run is
    still the interrupted one (or another's that went on); a new run its failure (``-1``)."""
    return -1 if start.resume is None else -2
