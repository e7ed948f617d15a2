"""Activation in batches: many sessions started and restored for about the cost of one.

On 0.1 a new session cost one round trip to the sessions supervisor and one blocking checkpoint
read, one session at a time (~1.1 ms each: 11 s for 10,000). Here the router queues new sessions
and, once per turn of the event loop, the :class:`Activator` sends each chunk of them as *one*
``start_children`` message to the sessions supervisor and *one* ``LoadSessions`` read to the
store actor, in parallel. When both answers are in (they come back to the loop thread), each
session gets its checkpoint in a :class:`Restore` message and the runs that waited for it.
Nothing here blocks the loop.

The activation timeout bounds a *stuck* activation, not a queue. The store actor answers its
reads in order, and the sessions supervisor its ``start_children``: a :class:`_Lane` for each
watches that it keeps answering. A batch fails ``RUNTIME_TIMEOUT`` only when the one it waits on
has answered nothing for ``timeout`` seconds since the batch was sent, so a backlog of 10,000
new sessions (20 batches) behind a slow store all activate however long the 20 reads take
together; a read that never returns fails its batch, and those queued behind it, ``timeout``
seconds after the store's last answer (on 0.2 each batch had ``timeout`` from its sending, and
on a busy machine the tail of the backlog failed while the store was still answering). Those
seconds are the loop's: a stretch in which the loop itself could not run (a collector pause,
a starved process) counts for two ticks of the watchdog at most, since whatever the batch
waits on could not run either.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, cast

import pykka

from praxo_actors._errors import AgentError, PraxoError, ProtocolError, RuntimeLimitError
from praxo_actors._log import get_logger
from praxo_actors.actors import MNFuture
from praxo_actors.actors._checks import loop_owned
from praxo_actors.codes import (
    PROTOCOL_INVALID_MESSAGE,
    RUNTIME_SESSION_LIMIT,
    RUNTIME_STOPPED,
    RUNTIME_TIMEOUT,
    SESSION_START_FAILED,
    STORE_FAILED,
)
from praxo_actors.memory._log import StoredSession
from praxo_actors.runtime._protocol import LoadSessions, Sessions, decode, encode
from praxo_actors.runtime._session._session import SessionActor
from supervisors import ChildSpec, SupervisorError
from supervisors._errors import NOT_RUNNING

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._clock import LoopClock, Timer
    from praxo_actors.runtime._kernel._kernel import Kernel
    from praxo_actors.runtime._kernel._table import Entry

__all__ = ["Activator"]

logger = get_logger("praxo_actors.runtime")

# Sessions per start_children message and per store read: large enough to amortise both, small
# enough that the first sessions of a burst of 10,000 start while the last are still queued.
CHUNK = 500

# Watchdog ticks per activation timeout while batches wait: a stuck batch fails within a tenth
# of the timeout after its time is up.
TICKS = 10
_EPSILON = 1e-9  # seconds summed tick by tick may fall short of the timeout by a rounding

# A new session answers its supervisor's first message from the loop, behind the loop's
# backlog: on 2 busy vCPUs one full collection took 7 s at 45,000 live sessions, and starts
# bounded by the 10 s timeout failed SUPERVISOR_START_FAILED past 65,000. The watchdog, on
# loop time, bounds a stuck start; this real-time bound (in timeouts) only ends a wedged loop's.
START_TIMEOUTS = 6


class _Batch:
    # Ids and entries side by side, not (id, entry) pairs: a pair per session, kept alive by
    # whatever still holds the list, would be a tracked object per live session.
    __slots__ = ("documents", "done", "entries", "ids", "refs")

    def __init__(self, ids: list[str], entries: list[Entry]) -> None:
        self.ids = ids
        self.entries = entries
        self.documents: list[StoredSession | None] | PraxoError | None = None
        self.refs: list[pykka.ActorRef[Any] | SupervisorError] | None = None
        self.done = False


class _Lane:
    """The batches waiting on one answerer (the store, or the sessions supervisor), in order.

    ``field`` names the batch slot its answer fills. The lane counts the seconds the loop has
    run while batches wait (``active``); a batch is stuck once ``timeout`` of them have passed
    since it was sent and since the answerer's last answer. A tick, ``TICKS`` times per
    timeout while anything waits, brings the count up to date and fails what is stuck.
    """

    __slots__ = ("activator", "active", "answered", "field", "last", "name", "timer", "waiting")

    def __init__(self, activator: Activator, name: str, field: str) -> None:
        self.activator = activator
        self.name = name
        self.field = field
        self.waiting: deque[tuple[_Batch, float]] = deque()  # (batch, ``active`` when sent)
        self.active = 0.0
        self.answered = 0.0  # ``active`` at the last answer
        self.last = 0.0  # the clock's reading when ``active`` was last brought up to date
        self.timer: Timer | None = None

    def sent(self, batch: _Batch) -> None:
        """Watch a batch whose request is on its way (before the answer can come)."""
        if self.timer is None:  # nothing waited until now: there is nothing to count
            self.last = self.activator.clock.now()
            self._arm()
        else:
            self._count()
        self.waiting.append((batch, self.active))

    def answer(self) -> None:
        """Note an answer (any batch's: a late one for an expired batch is progress too)."""
        self._count()
        self.answered = self.active
        waiting = self.waiting
        while waiting and self._settled(waiting[0][0]):
            waiting.popleft()

    def _count(self) -> None:
        now = self.activator.clock.now()
        # A gap longer than two ticks means the loop itself was held up (a collector pause of
        # seconds on a starved machine): the answerer was too, so only two ticks count.
        self.active += min(max(0.0, now - self.last), 2 * self.activator.timeout / TICKS)
        self.last = now

    def _settled(self, batch: _Batch) -> bool:
        return batch.done or getattr(batch, self.field) is not None

    def _arm(self) -> None:
        self.timer = self.activator.clock.call_later(self.activator.timeout / TICKS, self._tick)

    def _tick(self) -> None:
        self.timer = None
        self._count()
        timeout, waiting, stuck = self.activator.timeout, self.waiting, []
        while waiting:
            batch, sent = waiting[0]
            if self._settled(batch):
                waiting.popleft()
                continue
            if self.active - max(sent, self.answered) < timeout - _EPSILON:
                break  # so are the later ones: they were sent after it
            stuck.append(waiting.popleft()[0])
        if waiting:
            self._arm()
        if stuck:
            self.activator.expire(stuck, self.name)


@loop_owned
class Activator:
    """Start and restore new sessions in batches (on the loop thread; see the module doc)."""

    def __init__(
        self, kernel: Kernel, scheduler: Any, registry: Any, timeout: float, clock: LoopClock
    ) -> None:
        self.kernel = kernel
        self.host = kernel.host
        self.scheduler = scheduler
        self.registry = registry
        self.timeout = timeout
        self.clock = clock
        self._ids: list[str] = []
        self._entries: list[Entry] = []
        self._scheduled = False
        self._reads = _Lane(self, "store", "documents")
        self._starts = _Lane(self, "sessions supervisor", "refs")

    def close(self) -> None:
        """Cancel the watchdog timers (the runtime has stopped; a clock may outlive it)."""
        for lane in (self._reads, self._starts):
            if lane.timer is not None:
                lane.timer.cancel()
                lane.timer = None

    def activate(self, session_id: str, entry: Entry) -> None:
        """Queue a new session; the queue is sent at the end of this turn of the loop."""
        self._ids.append(session_id)
        self._entries.append(entry)
        if not self._scheduled:
            self._scheduled = True
            self.host.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._scheduled = False
        ids, entries = self._ids, self._entries
        self._ids, self._entries = [], []
        for start in range(0, len(ids), CHUNK):
            end = start + CHUNK
            self._send(_Batch(ids[start:end], entries[start:end]))

    def _send(self, batch: _Batch) -> None:
        host = self.host
        # The tree's current children (the kernel's, read on its loop): a session started now
        # commits to this store actor for its whole life, since a restart of the store
        # restarts the sessions supervisor after it (rest_for_one).
        store, sessions = self.kernel.store_ref, self.kernel.sessions
        self._reads.sent(batch)
        self._starts.sent(batch)
        ids = batch.ids
        try:
            if store is None:
                raise pykka.ActorDeadError("no store actor")
            # The store actors answer with an MNFuture, which takes a done callback.
            read = cast("MNFuture[Any]", store.ask(encode(LoadSessions(ids)), block=False))
        except pykka.ActorDeadError:
            self._documents(batch, AgentError(RUNTIME_STOPPED, "the store has stopped"))
        else:
            read.add_done_callback(lambda future: host.post(self._read_done, batch, future))

        def started(outcomes: list[pykka.ActorRef[Any] | SupervisorError]) -> None:
            host.post(self._started, batch, outcomes)

        try:
            if sessions is None or store is None:
                raise pykka.ActorDeadError("no sessions supervisor")
            # The event bus's current ref, handed to the batch's sessions the same way (a
            # restart of the bus restarts the store and the sessions after it): one tuple.
            refs = (store, self.kernel.bus_ref)
            specs = [
                ChildSpec(
                    session_id,
                    _SessionStart(self, session_id, entry, refs),
                    restart="temporary",
                    shutdown=self.timeout,
                    start_timeout=self.timeout * START_TIMEOUTS,
                )
                for session_id, entry in zip(batch.ids, batch.entries, strict=True)
            ]
            sessions.start_children(specs, started)
        except pykka.ActorDeadError:
            error = SupervisorError(NOT_RUNNING, "the sessions supervisor stopped")
            self._started(batch, [error] * len(batch.ids))

    def _read_done(self, batch: _Batch, future: pykka.Future[Any]) -> None:
        try:
            reply = decode(future.get(timeout=0))
        except PraxoError as exc:
            self._documents(batch, exc)
            return
        except Exception as exc:  # the store actor failed or stopped
            self._documents(batch, PraxoError(STORE_FAILED, f"{type(exc).__name__}: {exc}"))
            return
        if not isinstance(reply, Sessions):
            self._documents(batch, ProtocolError(PROTOCOL_INVALID_MESSAGE, "bad store reply"))
            return
        self._documents(batch, reply.states)

    def _documents(self, batch: _Batch, documents: list[StoredSession | None] | PraxoError) -> None:
        batch.documents = documents
        self._reads.answer()
        self._finish(batch)

    def _started(self, batch: _Batch, refs: list[pykka.ActorRef[Any] | SupervisorError]) -> None:
        batch.refs = refs
        self._starts.answer()
        self._finish(batch)

    def _finish(self, batch: _Batch) -> None:
        documents, refs = batch.documents, batch.refs
        if batch.done:
            # Expired: the runs failed already. What started late is stopped as its start is
            # reported, whether or not the store ever answers: no session actor is left that
            # no entry owns.
            if refs:
                _stop_started(refs)
                batch.refs = []
            return
        if documents is None or refs is None:
            return
        batch.done = True
        lifecycle = self.kernel.lifecycle
        for i, (session_id, entry) in enumerate(zip(batch.ids, batch.entries, strict=True)):
            ref = refs[i]
            if isinstance(ref, SupervisorError):
                lifecycle.activation_failed(session_id, entry, _activation_error(ref))
            elif isinstance(documents, PraxoError):
                ref.stop(block=False)
                lifecycle.activation_failed(session_id, entry, documents)
            else:
                lifecycle.activated(session_id, entry, ref, documents[i])
        # Both answers are in, so nothing reads the batch again; but the store's future and the
        # supervisor's last message may hold it until their next message: let it hold no
        # session (each (id, entry) pair, and its document, would look like the session's own).
        batch.ids, batch.entries, batch.documents, batch.refs = [], [], None, None

    def expire(self, batches: list[_Batch], waited_for: str) -> None:
        """Fail the runs of batches stuck on ``waited_for`` (``RUNTIME_TIMEOUT``)."""
        error = PraxoError(
            RUNTIME_TIMEOUT,
            f"sessions not activated: the {waited_for} answered nothing for {self.timeout} s",
        )
        sessions = sum(len(batch.ids) for batch in batches)
        logger.error(
            "activation_timeout", sessions=sessions, waiting_for=waited_for, timeout=self.timeout
        )
        lifecycle = self.kernel.lifecycle
        for batch in batches:
            batch.done = True
            for session_id, entry in zip(batch.ids, batch.entries, strict=True):
                lifecycle.activation_failed(session_id, entry, error)
            if batch.refs:  # started, but the read never came: stop them
                _stop_started(batch.refs)
                batch.refs = []
            batch.ids, batch.entries = [], []  # failed: a late answer has none to activate


def _stop_started(refs: list[pykka.ActorRef[Any] | SupervisorError]) -> None:
    for ref in refs:
        if isinstance(ref, pykka.ActorRef):
            ref.stop(block=False)


def _activation_error(exc: SupervisorError) -> PraxoError:
    if exc.code == "SUPERVISOR_MAX_CHILDREN":
        return RuntimeLimitError(RUNTIME_SESSION_LIMIT, str(exc))
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, PraxoError):
        return PraxoError(cause.code, str(cause))
    return PraxoError(SESSION_START_FAILED, f"{exc.code}: {exc}")


class _SessionStart:
    """A session's child-spec ``start`` (on the supervisor's thread): a slotted callable, since
    the sessions supervisor keeps one for each live session (a closure costs ~200 bytes more)."""

    __slots__ = ("activator", "entry", "refs", "session_id")

    def __init__(
        self,
        activator: Activator,
        session_id: str,
        entry: Entry,
        refs: tuple[pykka.ActorRef[Any], pykka.ActorRef[Any] | None],
    ) -> None:
        self.activator = activator
        self.session_id = session_id
        self.entry = entry
        self.refs = refs  # (store, event bus), taken on the loop

    def __call__(self) -> pykka.ActorRef[Any]:
        activator = self.activator
        session_id = self.session_id
        # An abandoned activation's session starts and is stopped by the kernel when its
        # start is reported (Lifecycle.activated): this thread reads none of the kernel's state.
        stale = activator.registry.lookup(session_id)
        if stale is not None:  # a passivated actor still stopping: let it finish first
            try:
                stale.stop(timeout=activator.timeout)
            except (pykka.ActorDeadError, pykka.Timeout):
                logger.warning("stale_session_not_stopped", session_id=session_id)
        store, bus = self.refs
        ref = SessionActor.start(
            activator.host, session_id, store, bus, actor_scheduler=activator.scheduler
        )
        try:
            registered: pykka.ActorRef[Any] = activator.registry.register(session_id, ref)
        except Exception:
            ref.stop(block=False)
            raise
        return registered
