"""M:N Pykka actors: many actors share the few threads of a :class:`Scheduler`.

Why: a Pykka ``ThreadingActor`` owns a thread. Measured on a 2-core machine, that costs 24 KiB of
RSS per actor, stops near 21,800 actors (the kernel's map limit), and with 10,000 actor threads
one ask to each takes ~3 s because every thread fights for the GIL. Agent sessions are many and
mostly idle, so they must cost memory, not threads: as BEAM processes share schedulers, an
:class:`MNActor` is only a mailbox until a message arrives, and a worker of its scheduler then runs
it for a bounded batch.

How: :class:`MNActor` is a ``pykka.Actor`` built through Pykka's extension points, reached
through :mod:`supervisors._pykka_compat` (the one module that names Pykka's private hooks).

- ``_create_actor_inbox`` returns a lean mailbox (a deque made on the first message and dropped
  when the mailbox drains). Putting into an idle mailbox puts the actor on its scheduler's ready
  queue; the actor is on that queue or running, never both, so one thread at a time runs it and
  its messages are handled in FIFO order.
- ``_start_actor_loop`` queues the actor's first turn. A turn runs Pykka's own
  ``_actor_loop_setup`` (``on_start``, failures to ``_handle_failure``) on the first turn, then
  Pykka's message loop as :func:`supervisors._pykka_compat.run_messages` runs it: a plain
  message goes straight to ``on_receive`` (Pykka's stop and proxy messages, and every message
  of a class that replaces ``_handle_receive``, still go through that hook), with Pykka's
  answers and failure handling line for line. The turn ends when the mailbox is empty or
  ``batch`` messages (64 by default) have run; the actor then goes to the back of the ready
  queue, which keeps the scheduler fair. When the actor stops, ``_actor_loop_teardown``
  answers what is left with ``ActorDeadError``. So ``_handle_failure``, ``on_failure``,
  ``_stop`` and the ``ActorRegistry`` bookkeeping behave exactly as for a ``ThreadingActor``,
  and code that hooks them (supervisors) works with both kinds.
- ``_create_future`` returns :class:`MNFuture`, awaitable from asyncio without blocking the loop.
- ``actor_stopped`` is the mailbox itself, a ``threading.Event`` whose condition is made only
  when someone waits on it (Pykka never does): a plain ``Event`` costs ~1.2 KB.
- It is a ``supervisors`` ``ExitHooks`` actor: it reports its own exits to monitors, so
  watching it wraps nothing on the instance.

Measured with ``bench/mn_actors.py`` (100,000 idle actors, same machine): an idle MNActor costs
~610 B of RSS (~570 B of Python objects: the actor, its ref, URN, weakref, stop event and
mailbox; the ref has since kept no weak reference, ~90 B fewer), against ~24 KiB for a
ThreadingActor; 10,000 actors asked once take ~0.2 s instead of ~1.6 s; an ask round trip
costs about what a ThreadingActor's does. Pykka's ``ActorRegistry`` adds 8 B per actor, but
it is a list: each unregistration scans and shifts it, so stopping 100,000 actors takes ~6 s
(stop the oldest first; a LIFO ``stop_all`` is quadratic).

A scheduler is chosen, in this order, by ``start(..., actor_scheduler=...)``, by the class
attribute ``actor_scheduler``, or else is :func:`default_scheduler`.

A ``BaseException`` never reaches a scheduler thread. In a handler, Pykka's loop catches it, stops
the actor and calls ``ActorRegistry.stop_all()``, as for a ``ThreadingActor``. Raised elsewhere (by
``on_start`` or a failure hook), it stops the actor, is logged, and ``ActorRegistry.stop_all`` is
asked without waiting, the same outcome. An ``Exception`` raised by a failure hook outside
Pykka's guards stops only that actor.

A handler that waits on its own actor's reply deadlocks, as with a thread per actor: pass a
timeout. A handler that blocks on something other than an :class:`MNFuture` should do so inside
:func:`blocking`.
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeAlias, cast

import pykka

from praxo_actors._log import get_logger
from praxo_actors.actors._futures import MNFuture
from praxo_actors.actors._sched import Scheduler, default_scheduler
from supervisors import _pykka_compat as compat

if TYPE_CHECKING:
    from praxo_actors.actors._loop_sched import LoopScheduler
    from supervisors._pykka_compat import Envelope

    AnyScheduler: TypeAlias = "Scheduler | LoopScheduler"

__all__ = ["MNActor"]

logger = get_logger("praxo_actors.actors")

_NEW, _STARTING, _IDLE, _QUEUED, _DEAD = range(5)
_NO_BUDGET = sys.maxsize
# The scheduler named to the innermost ``start()`` in this thread; read by ``_start``.
_start_on: ContextVar[AnyScheduler | None] = ContextVar("_start_on", default=None)
# Guards lazy creation of stop-event conditions; taken only by set/clear/wait, never per message.
_event_lock = threading.Lock()


class _Yield(Exception):
    """End the actor's turn: its mailbox is empty or its batch is spent."""


class _Inbox(threading.Event):
    """An actor's mailbox, its place in the scheduler's ready queue, and its stop event.

    The stop event (``actor_stopped``) is the same object, a ``threading.Event`` whose
    condition is made only when a thread waits on it (Pykka never does; a plain ``Event``
    costs ~1.2 KB): one object per actor fewer for the collector to walk.
    """

    __slots__ = (
        "_actor",
        "_budget",
        "_cond",
        "_flag",
        "_live_next",
        "_live_prev",
        "_q",
        "_sched",
        "_state",
    )

    def __init__(self) -> None:
        # No super().__init__(): that would make the Condition this class exists to avoid.
        self._actor: MNActor | None = None
        self._sched: AnyScheduler = cast("AnyScheduler", None)
        self._q: deque[Envelope[Any]] | None = None
        self._state = _NEW
        self._budget = 0
        self._flag = False
        self._cond: threading.Condition | None = None
        # Its place in the scheduler's LiveActors while the actor has not stopped.
        self._live_prev: _Inbox | None = None
        self._live_next: _Inbox | None = None

    # -- the stop event (threading.Event's protocol) -------------------------------------------

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        with _event_lock:
            self._flag = True
            cond = self._cond
        if cond is not None:
            with cond:
                cond.notify_all()

    def clear(self) -> None:
        with _event_lock:
            self._flag = False

    def wait(self, timeout: float | None = None) -> bool:
        with _event_lock:
            if self._flag:
                return True
            if self._cond is None:
                self._cond = threading.Condition(threading.Lock())
            cond = self._cond
        with cond:
            # set() sets the flag before it takes the condition, so a notify cannot be missed.
            return cond.wait_for(self.is_set, timeout)

    def _at_fork_reinit(self) -> None:
        if self._cond is not None:
            self._cond._at_fork_reinit()  # type: ignore[attr-defined]

    # -- the ActorInbox protocol --------------------------------------------------------------

    def put(self, envelope: Envelope[Any], /) -> None:
        with self._sched._lock:
            state = self._state
            if state != _DEAD:
                q = self._q
                if q is None:
                    q = self._q = deque()
                q.append(envelope)
                if state == _IDLE:
                    self._state = _QUEUED
                    self._sched._ready_locked(self)
                return
        compat.answer_dead(envelope)

    def get(self) -> Envelope[Any]:
        # Called only by Pykka's loop in a turn (outside its handler guards) and by its teardown
        # (after an empty() check, with no budget limit).
        if self._budget <= 0:
            raise _Yield
        self._budget -= 1
        q = self._q
        if not q:
            raise _Yield
        return q.popleft()

    def _take(self) -> Envelope[Any] | None:
        # get() without the exception: the fast loop ends the turn on None (raising and
        # catching _Yield cost a turn ~1 µs).
        if self._budget <= 0:
            return None
        self._budget -= 1
        q = self._q
        if not q:
            return None
        return q.popleft()

    def empty(self) -> bool:
        return not self._q

    # -- scheduling ---------------------------------------------------------------------------

    def _start(self) -> None:
        sched = self._sched
        with sched._lock:
            sched._check_open_locked()
            self._state = _STARTING
            sched._live.add(self)
            sched._ready_locked(self)

    def _run(self) -> None:
        """Run one turn of the actor on the calling scheduler thread."""
        actor = self._actor
        assert actor is not None
        sched = self._sched
        self._budget = sched._batch
        ended = False
        try:
            if self._state == _STARTING:
                # put() treats _STARTING like _QUEUED, so this needs no lock.
                self._state = _QUEUED
                compat.loop_setup(actor)
            ended = compat.run_messages(actor, self._take)
        except _Yield:
            ended = True
        except Exception:
            self._crash(actor, stop_all=False)
        except BaseException:
            self._crash(actor, stop_all=True)
        if not ended:
            self._finish(actor)
            return
        # The turn is over: back of the ready queue if a message came meanwhile, else idle
        # (inline, not a method: every turn of every actor ends here).
        with sched._lock:
            if self._q:
                sched._ready.append(self)
            else:
                self._q = None
                self._state = _IDLE

    def _crash(self, actor: MNActor, *, stop_all: bool) -> None:
        logger.error("actor.crashed", actor=str(actor), exc_info=True)
        pykka.ActorRegistry.unregister(actor.actor_ref)
        actor.actor_stopped.set()
        compat.stopped_outside_exits(actor)
        if stop_all:
            pykka.ActorRegistry.stop_all(block=False)

    def _finish(self, actor: MNActor) -> None:
        compat.loop_ended(actor)
        self._budget = _NO_BUDGET
        sched = self._sched
        while True:
            try:
                compat.loop_teardown(actor)
            except Exception:
                logger.exception("actor.teardown_failed", actor=str(actor))
            with sched._lock:
                if not self._q:
                    self._q = None
                    self._state = _DEAD
                    # Let the actor be collected while refs to it (and to this inbox) live on.
                    self._actor = None
                    sched._gone_locked(self)
                    return

    def _abort(self) -> None:
        with self._sched._lock:
            self._state = _DEAD
            self._actor = None
            self._sched._gone_locked(self)
        while self._q:
            compat.answer_dead(self._q.popleft())
        self._q = None

    def _kill(self) -> None:
        """Mark the actor dead without running it: its scheduler shut down under it.

        Messages still queued are answered with ``ActorDeadError``, and so is every later one;
        ``is_alive()`` turns False. Its ``on_stop`` cannot run: no thread is left to run it.
        """
        actor = self._actor
        self._abort()
        if actor is not None:
            pykka.ActorRegistry.unregister(actor.actor_ref)
            actor.actor_stopped.set()
            compat.stopped_outside_exits(actor)
            logger.warning("actor.abandoned", actor=str(actor), reason="scheduler shut down")


def _start(actor: MNActor) -> None:
    """Queue a constructed actor's first turn on its scheduler (the starting thread)."""
    inbox = cast("_Inbox", actor.actor_inbox)
    chosen = _start_on.get()
    if chosen is not None:
        inbox._sched = chosen
    try:
        inbox._start()
    except Exception:
        pykka.ActorRegistry.unregister(actor.actor_ref)
        actor.actor_stopped.set()
        inbox._abort()
        raise


@compat.actor_hooks(inbox=_Inbox, future=MNFuture, start=_start)
class MNActor(compat.ExitHooks):
    """A Pykka actor that runs on a shared :class:`Scheduler` instead of its own thread.

    Subclass it as you would ``pykka.ThreadingActor``; ``on_start``, ``on_receive``,
    ``on_failure`` and ``on_stop`` run on a scheduler thread, one message at a time.

    Example:
        ``ref = Counter.start(actor_scheduler=Scheduler(2))``
    """

    # Its mailbox, which is also its stop event: no field of its own.
    actor_stopped = compat.STOP_EVENT_IS_INBOX

    actor_scheduler: ClassVar[AnyScheduler | None] = None
    """The scheduler of this class's actors; ``None`` means :func:`default_scheduler`."""

    actor_registered: ClassVar[bool] = True
    """Whether ``start()`` adds the actor to ``pykka.ActorRegistry``.

    Pykka's registry is a list: unregistering scans it, so stopping N registered actors costs
    O(N²) (6 s for 100,000 here). A class whose actors are tracked elsewhere (the runtime's
    sessions are, in a :class:`supervisors.Registry`) sets this to False; its actors are then
    not seen by ``ActorRegistry.get_all()`` or ``stop_all()``.
    """

    @classmethod
    def start(
        cls, *args: Any, actor_scheduler: AnyScheduler | None = None, **kwargs: Any
    ) -> pykka.ActorRef[Self]:
        """Start an actor; the other arguments go to the constructor, as in Pykka.

        Args:
            actor_scheduler: Run the actor on this scheduler instead of the class's one.

        Raises:
            SchedulerClosedError: If the scheduler was shut down (``RUNTIME_SCHEDULER_CLOSED``).
        """
        token = _start_on.set(actor_scheduler)
        try:
            if cls.actor_registered:
                return super().start(*args, **kwargs)
            actor = cls(*args, **kwargs)
            compat.start_loop(actor)
            return actor.actor_ref
        finally:
            _start_on.reset(token)

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        # What ``pykka.Actor.__init__`` sets (it ends the __init__ chain as it does), less the
        # threading.Event it would make only for this class to replace it: per actor, three
        # objects for the collector that a burst of 10,000 sessions had to sweep.
        inbox = _Inbox()
        compat.init_actor(self, inbox, inbox, held=True)
        inbox._actor = self
        inbox._sched = type(self).actor_scheduler or default_scheduler()
