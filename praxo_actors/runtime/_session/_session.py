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
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import msgspec
import pykka

from praxo_actors._errors import AgentError, CheckpointError, PraxoError, ProtocolError
from praxo_actors.actors import MNActor
from praxo_actors.agent._effects import CallModel, Emit
from praxo_actors.agent._interpret import Call, Reply, decide
from praxo_actors.codes import (
    AGENT_CANCELLED,
    AGENT_DEADLINE,
    CHECKPOINT_SIGNATURE,
    PROTOCOL_INVALID_MESSAGE,
    SESSION_CRASHED,
)
from praxo_actors.memory._inbox import AcceptedRun
from praxo_actors.memory._log import Commit, PendingRun, StoredSession
from praxo_actors.models import Event, Session
from praxo_actors.runtime._kernel._agents import DEFAULT_AGENT
from praxo_actors.runtime._protocol import (
    CancelRun,
    CommitRun,
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
from praxo_actors.runtime._session._calls import start_call
from praxo_actors.runtime._session._deadlines import Deadlines
from praxo_actors.runtime._session._guard import enter, failed_event, fenced, unreported
from praxo_actors.runtime._session._inbox import accept_write, start_of
from praxo_actors.runtime._session._info import info_of
from praxo_actors.runtime._session._outcome import unpack
from praxo_actors.runtime._session._publish import publish, publish_delta
from praxo_actors.runtime._session._restore import (
    LogPosition,
    partial_commit,
    result_document,
    revive,
    run_commit,
)
from praxo_actors.runtime._session._run import Run, open_run, resume_pending

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["SessionActor", "SessionCrashedError"]


class SessionCrashedError(AgentError):
    """What a session actor raises when crashed on purpose (``crash_for_testing``).

    Its runs then fail with :class:`~praxo_actors.AgentError` code ``SESSION_CRASHED``, as after
    any crash of a session actor.
    """


class SessionActor(MNActor):
    """Host one session: serialise its runs, perform their effects, checkpoint, restore."""

    # Sessions are found through the runtime's Registry; Pykka's list-based registry would make
    # stopping N sessions O(N²).
    actor_registered = False
    # The code its runs end with once told StopRuns (its stop follows); a class default, so
    # that an idle session holds no field for it.
    _stopping: str | None = None

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
        self.session: Session | None = None  # None until the Restore message
        self.position: LogPosition | None = None  # where the session stands in its log
        self.stash: list[Any] | None = None
        # A list, not a deque: an idle session's empty deque would cost 600 bytes. None while
        # empty: an idle session then holds no list for the collector to walk.
        self.queue: list[StartRun] | None = None
        self.current: Run | None = None
        self._next_token = 0
        self._deadlines: Deadlines | None = None  # None while no run has a deadline
        self._own_options: dict[str, Any] | None = None  # per-session agents' options
        # Runs restored from the store (resumed from the journal, or accepted and queued): a
        # StartRun of theirs sent again after a crash of this session's actor is a repeat.
        self._resumed: set[str] | None = None
        self._inbox: set[str] | None = None  # accepted runs in the store's inbox, not ended
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
            enter(current.run.close)  # the machine's own clean-up may call user code
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
                    if (
                        current is not None
                        and current.run.run_id == run_id
                        and token == current.token
                    ):
                        model = type(current.run.effect) is CallModel
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
                    return encode(info_of(self.session, self.current, self._last_agent, queued))
                case GetHistory():
                    if self.session is None:
                        return None  # not restored yet: the caller reads the checkpoint instead
                    return encode(History(messages=list(self.session.messages)))
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
            self._last_agent = self._committed_agent = state.agent
        if state is not None and state.pending is not None:
            self._resume(state.pending, state.journal)
        if state is not None and state.inbox:
            self._requeue(state.inbox, state.pending)
        stash, self.stash = self.stash, None
        for message in stash or ():
            self.on_receive(message)

    def _cancel(self, run_id: str, hard: bool = False, keep: bool = False) -> None:
        current = self.current
        if current is not None and current.run.run_id == run_id and not hard:
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
            self._advance(current, False, current.cut_off(code, _STOPPED[code == _RUNTIME]))
        queue, self.queue = self.queue, None
        for start in queue or ():
            self._failed(start.run_id, _stopped(code, start.run_id), _kept_as_is(start))

    def _cut_off(self, run_id: str, code: str, running: str, queued: str) -> None:
        """Fail a run now: in flight, its callback is cancelled (async) or its outcome ignored."""
        current = self.current
        if current is not None and current.run.run_id == run_id:
            self._advance(current, False, current.cut_off(code, running))
            return
        for start in self.queue or ():
            if start.run_id == run_id:
                assert self.queue is not None
                self.queue.remove(start)
                self._failed(run_id, AgentError(code, queued, run_id), _kept_as_is(start))
                return

    def own_options(self) -> dict[str, Any]:
        """Return this session's cache of per-session agents' options (made on first use)."""
        if self._own_options is None:
            self._own_options = {}
        return self._own_options

    def _failed(self, run_id: str, error: BaseException, journal: int = -1) -> None:
        """Fail a run; ``journal``: the entries of its journal to drop (a durable run ended;
        -2: keep nothing, the run's end is committed already or the run is as it was).

        An accepted run leaves the inbox with this commit (it never began, or began and ended).
        """
        inbox = run_id if self._inbox is not None and run_id in self._inbox else None
        self._ended(run_id)
        host = self.host
        host.post(host.router.failed, run_id, error)
        if self._stopping == _RUNTIME:
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
                self._failed(start.run_id, error, _kept_as_is(start))
                continue
            assert self.session is not None
            # The agent's factory, and the run's start up to its first effect (instructions):
            # user code, guarded as ``enter`` guards it (inline: the path of every run).
            try:
                current = open_run(host, self, self.session_id, self.session, start)
            except BaseException as exc:
                self._failed(start.run_id, exc, _kept_as_is(start))
                continue
            self._last_agent = start.agent
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
        run = current.run
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
        run = current.run
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
        commit = partial_commit(
            self.position, self.session, partial, error, run_id, self.session_id, host.key, journal
        )
        if commit is None:
            return False
        self.session = partial
        self._to_store(encode(CommitRun(commit)))
        return True

    def _complete(self, current: Run) -> None:
        host = self.host
        result = current.run.result
        if current.events is not None:
            self._publish(current)
        self.current = None
        assert self.session is not None and self.position is not None
        durable = current.durable
        journal = -1 if durable is None else durable.entries
        # Writing the result is a call into user code too (a structured-output type's
        # encoding), guarded as ``enter`` guards it.
        try:
            commit = run_commit(
                self.position, self.session, result, host.key, journal, current.agent
            )
        except BaseException as exc:  # e.g. metadata that is not JSON: the run cannot be kept
            self._failed(result.run_id, exc)
            self._start_next()
            return
        if self._inbox is not None and result.run_id in self._inbox and journal <= 0:
            # Accepted, and ended with no journal entry to take it out (its agent is no longer
            # durable): the commit does.
            commit = msgspec.structs.replace(commit, inbox=result.run_id)
        self.session = result.session  # commit: the run completed and its record is written
        if current.agent:
            self._committed_agent = current.agent
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
        run_id = current.run.run_id
        current.task = start_call(self.host, self.actor_ref, run_id, token, call, current.chain)

    def _publish(self, current: Run) -> None:
        events = current.take_events()  # callers skip a run with none queued
        if events:
            publish(self.host, self.bus, events, current.parent)

    def _publish_delta(self, event: Event) -> None:
        publish_delta(self.host, self.bus, event)

    # -- durable runs ------------------------------------------------------------------------

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

    def _journal(self, current: Run, write: bytes | None, move: tuple[Any, ...]) -> None:
        """Send a journal write; make ``move`` once the store has it (at once if no write)."""
        if write is None:  # a value that is not JSON: nothing to keep, the run fails on it
            self._move(current, move)
            return
        current.held = move
        self._to_store(write)

    def _journaled(self, run_id: str, entries: int) -> None:
        current = self.current
        if current is not None and current.run.run_id == run_id:
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
        opened, current = enter(
            resume_pending, host, self, self.session_id, self.session, pending, journal
        )
        if not opened:
            self._failed(run_id, current, pending.entries)
            return
        self.current = current
        # The resume is counted in the store before anything runs again, so a call made again
        # knows its attempt even when this process dies too.
        assert current.durable is not None
        self._journal(current, current.durable.marker(), ("start",))


_RUNTIME = "RUNTIME_STOPPED"
_STOPPED = ("the session stopped while a callback ran", "the runtime stopped while a callback ran")


def _stopped(code: str, run_id: str) -> AgentError:
    """The error of a run a stop ends before it started."""
    return AgentError(
        code, "the runtime stopped" if code == _RUNTIME else "the session stopped", run_id
    )


def _kept_as_is(start: StartRun) -> int:
    """What a run that fails before it starts keeps: a resume nothing (``-2``), as its run is
    still the interrupted one (or another's that went on); a new run its failure (``-1``)."""
    return -1 if start.resume is None else -2
