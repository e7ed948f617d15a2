"""The session actor: one conversation, its runs in order, checkpointed after each.

A run in flight is the agent loop's suspended state machine (:func:`praxo_actors.agent.start_run`).
The actor performs the machine's effects without ever waiting: an ``async def`` callback starts as
a task on the runtime's event loop (the thread the session itself runs on, by default), a plain
one runs on the runtime's I/O pool, and its outcome comes back inside an :class:`EffectDone`
message. So the actor keeps answering (history, cancel, more runs to queue) while its run waits.

The first message a session handles is its :class:`Restore` (the router reads checkpoints in
batches while the actor starts); anything that arrives before it is stashed and handled after.

A run is atomic for its session: the actor commits the run's session only when the run
completes, then saves a checkpoint through the store actor; the run's future completes when the
checkpoint is stored. A failed run leaves the session as it was.

This module holds the actor's life and its messages; its bases hold how runs come in
(:mod:`~praxo_actors.runtime._session._intake`) and how they run
(:mod:`~praxo_actors.runtime._session._running`).
"""

from __future__ import annotations

from sys import intern
from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors._errors import AgentError, PraxoError, ProtocolError
from praxo_actors.agent._effects import CallModel
from praxo_actors.codes import AGENT_CANCELLED, PROTOCOL_INVALID_MESSAGE, SESSION_CRASHED
from praxo_actors.memory._log import StoredSession
from praxo_actors.models import Session
from praxo_actors.runtime._protocol import (
    CancelRun,
    Crash,
    EffectDone,
    EffectDoneRaw,
    GetHistory,
    GetInfo,
    History,
    Journaled,
    Restore,
    RunDeadline,
    StartRun,
    StopRuns,
    decode,
    decode_effect,
    encode,
)
from praxo_actors.runtime._session._deadlines import Deadlines
from praxo_actors.runtime._session._guard import enter, fenced
from praxo_actors.runtime._session._held import held_session
from praxo_actors.runtime._session._info import info_of
from praxo_actors.runtime._session._intake import SessionIntake
from praxo_actors.runtime._session._outcome import unpack
from praxo_actors.runtime._session._restore import LogPosition, revive
from praxo_actors.runtime._session._run import Run
from praxo_actors.runtime._session._running import RUNTIME, kept_as_is

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["SessionActor", "SessionCrashedError"]


class SessionCrashedError(AgentError):
    """What a session actor raises when crashed on purpose (``crash_for_testing``).

    Its runs then fail with :class:`~praxo_actors.AgentError` code ``SESSION_CRASHED``, as after
    any crash of a session actor.
    """


class SessionActor(SessionIntake):
    """Host one session: serialise its runs, perform their effects, checkpoint, restore."""

    # Sessions are found through the runtime's Registry; Pykka's list-based registry would make
    # stopping N sessions O(N²).
    actor_registered = False
    # Rarely set, so defaults of the class: an instance's attribute values take 8 bytes for
    # every name any instance of the class has set (40 bytes for these five on every session).
    # Each is set only when it holds something (and reset only when it did).
    stash: list[Any] | None = None  # messages that came before the Restore
    _deadlines: Deadlines | None = None  # None while no run has a deadline
    _own_options: dict[str, Any] | None = None  # per-session agents' options
    # Runs restored from the store (resumed from the journal, or accepted and queued): a
    # StartRun of theirs sent again after a crash of this session's actor is a repeat.
    _resumed: set[str] | None = None
    _inbox: set[str] | None = None  # accepted runs in the store's inbox, not ended

    def __init__(
        self,
        host: SessionHost,
        session_id: str,
        store: pykka.ActorRef[Any],
        bus: pykka.ActorRef[Any] | None = None,
    ) -> None:
        super().__init__()
        self.host = host
        self.session_id = session_id
        # The store actor this session commits to, and the event bus it publishes to,
        # directly: both handed over by the kernel at its start (a restart of either restarts
        # every session after it, so the refs hold for this actor's life).
        self.store = store
        self.bus = bus
        # None until the Restore message; bytes while idle with a short conversation (_held).
        self.session: Session | bytes | None = None
        self.position: LogPosition | None = None  # where the session stands in its log
        # A list, not a deque: an idle session's empty deque would cost 600 bytes. None while
        # empty: an idle session then holds no list for the collector to walk.
        self.queue: list[StartRun] | None = None
        self.current: Run | None = None
        self._next_token = 0
        self._last_agent: str | None = None  # the agent of the last run started
        self._committed_agent: str | None = None  # the agent of the last run committed

    # -- lifecycle --------------------------------------------------------------------------

    def on_failure(self, *_exc_info: Any) -> None:
        """Abandon the run in flight; the router fails this session's pending runs.

        Its async callback runs on: a durable run resumed after the crash may wait for it (an
        agent tool's child run).
        """
        self._abandon(cancel=False)
        self.host.post(
            self.host.router.session_down, self.session_id, self.actor_ref, True, self._version()
        )

    def on_stop(self) -> None:
        """Abandon whatever is left (a forced stop); the router fails those runs."""
        self._abandon(cancel=True)
        self.host.post(
            self.host.router.session_down, self.session_id, self.actor_ref, False, self._version()
        )

    def _version(self) -> int:
        return 0 if self.position is None else self.position.version

    def _abandon(self, cancel: bool) -> None:
        current = self.current
        if current is not None:
            if cancel:
                # An async callback in flight stops with its session (a sync one cannot be
                # stopped: its late outcome finds the actor dead and is dropped).
                current.cut_off(SESSION_CRASHED, "the session stopped")
            enter(current.close)  # the machine's own clean-up may call user code
            self.current = None
        self.queue = None
        if self._deadlines is not None:
            self._deadlines.cancel()
            self._deadlines = None

    # -- messages --------------------------------------------------------------------------

    def on_receive(self, message: Any) -> Any:
        """Dispatch one encoded runtime message (a callback's exception rides beside it).

        Raises:
            Exception: Only ever an ``Exception``, which stops this session alone (see
                :func:`~praxo_actors.runtime._session._guard.fenced`).
        """
        try:
            error = None
            if type(message) is tuple:
                message, error = message
            try:
                decoded: Any = decode(message)
            except (ProtocolError, RecursionError):
                # An EffectDone whose outcome does not decode fails its run, not the session.
                decoded = decode_effect(message)
                if decoded is None:
                    raise
            if self.session is None and not isinstance(
                decoded, Restore | Crash | GetHistory | GetInfo | StopRuns
            ):
                if self.stash is None:
                    self.stash = []
                self.stash.append(message if error is None else (message, error))
                return None
            match decoded:
                case StartRun() as start:
                    if self._resumed is not None and start.run_id in self._resumed:
                        return None  # restored from the store already (re-sent after a crash)
                    if not start.agent:  # ``runtime.session(id)``: the agent it was last run with
                        start = self._named(start)
                    if self._stopping is not None:
                        self._failed(start.run_id, _stopped(self._stopping, start.run_id), -2)
                        return None
                    if start.journal:
                        self._accept(start)
                    self._enqueue(start)
                case (
                    EffectDone(run_id=run_id, token=token, outcome=outcome)
                    | EffectDoneRaw(run_id=run_id, token=token, outcome=outcome)
                ):
                    current = self.current
                    if current is not None and current.run_id == run_id and token == current.token:
                        model = type(current.effect) is CallModel
                        ok, value = unpack(outcome, error, model)
                        if current.durable is None:  # nothing to journal: the next step
                            self._advance(current, ok, value)
                        else:
                            self._journal(current, *current.after(ok, value))
                case Journaled(run_id=run_id, entries=entries):
                    self._journaled(run_id, entries)
                case CancelRun(run_id=run_id, hard=hard, keep=keep):
                    self._cancel(run_id, hard, keep)
                case StopRuns(code=code):
                    self._stop_runs(code)
                case RunDeadline(run_id=run_id):
                    running = "the deadline passed while a callback ran"
                    self._cut_off(run_id, "AGENT_DEADLINE", running, "deadline passed while queued")
                case GetInfo():
                    queued = len(self.queue or ()) + len(self.stash or ())
                    held = self.session
                    session = None if held is None else held_session(held, self.session_id)
                    return encode(info_of(session, self.current, self._last_agent, queued))
                case GetHistory():
                    if self.session is None:
                        return None  # not restored yet: the caller reads the checkpoint instead
                    session = held_session(self.session, self.session_id)
                    return encode(History(messages=list(session.messages)))
                case Restore(state=state, min_version=min_version):
                    self._restore(state, min_version)
                case Crash(reason=reason):
                    raise SessionCrashedError(SESSION_CRASHED, reason)
                case other:
                    raise ProtocolError(
                        PROTOCOL_INVALID_MESSAGE, f"session got {type(other).__name__}"
                    )
            return None
        except Exception:
            raise
        except BaseException as exc:
            raise fenced(exc) from exc

    def _restore(self, state: StoredSession | None, min_version: int) -> None:
        if self.session is not None:
            raise ProtocolError(PROTOCOL_INVALID_MESSAGE, "the session is restored already")
        host = self.host
        try:
            session, position = revive(
                state, self.session_id, host.allowed_types, host.key, min_version
            )
        except PraxoError as exc:
            # Not a crash: the actor is fine, its stored state is not. The router fails the
            # runs routed here with this code; the next run tries again.
            host.post(host.router.restore_failed, self.session_id, self.actor_ref, exc)
            self.stop()
            return
        self.session = session
        self.position = position
        if state is not None and state.agent is not None:
            self._last_agent = self._committed_agent = intern(state.agent)
        if state is not None and state.pending is not None:
            self._resume(state.pending, state.journal)
        if state is not None and state.inbox:
            self._requeue(state.inbox, state.pending)
        stash = self.stash
        if stash is not None:
            self.stash = None
            for message in stash:
                self.on_receive(message)

    def _cancel(self, run_id: str, hard: bool = False, keep: bool = False) -> None:
        current = self.current
        if current is not None and current.run_id == run_id and not hard:
            current.cancelled = True  # seen at the next step boundary
            current.keep = keep
        else:
            self._cut_off(run_id, AGENT_CANCELLED, "cancelled while a callback ran", "cancelled")

    def _stop_runs(self, code: str) -> None:
        """End every run now, with ``code`` (the actor's stop follows): the one in flight is cut
        off (an async callback cancelled) and publishes ``run.failed``; queued ones fail unstarted.
        """
        self._stopping = code
        current = self.current
        if current is not None:
            current.keep = False  # a stop keeps no partial steps
            self._advance(current, False, current.cut_off(code, _STOPPED[code == RUNTIME]))
        queue, self.queue = self.queue, None
        for start in queue or ():
            self._failed(start.run_id, _stopped(code, start.run_id), kept_as_is(start))

    def _cut_off(self, run_id: str, code: str, running: str, queued: str) -> None:
        """Fail a run now: in flight, its callback is cancelled (async) or its outcome ignored."""
        current = self.current
        if current is not None and current.run_id == run_id:
            self._advance(current, False, current.cut_off(code, running))
            return
        for start in self.queue or ():
            if start.run_id == run_id:
                assert self.queue is not None
                self.queue.remove(start)
                self._failed(run_id, AgentError(code, queued, run_id), kept_as_is(start))
                return

    def own_options(self) -> dict[str, Any]:
        """Return this session's cache of per-session agents' options (made on first use)."""
        if self._own_options is None:
            self._own_options = {}
        return self._own_options


_STOPPED = ("the session stopped while a callback ran", "the runtime stopped while a callback ran")


def _stopped(code: str, run_id: str) -> AgentError:
    """The error of a run a stop ends before it started."""
    return AgentError(
        code, "the runtime stopped" if code == RUNTIME else "the session stopped", run_id
    )
