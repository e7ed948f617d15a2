"""The runtime's supervision tree: the event bus, the store actor, and the sessions supervisor.

::

    root Supervisor "praxo-runtime" (rest_for_one)
    ├── events    EventBus
    ├── store     LoopStoreActor (InMemoryStore) | StoreActor (any store that may block)
    └── sessions  DynamicSupervisor → SessionActor × N

Each child's start function hands the child's ref to the kernel by a post to the loop
(:meth:`Kernel.child_started`), so a child restarted by ``rest_for_one`` is found again and no
ref is written from the supervisor's thread. The store actor posts what each of its writes
settled to the kernel itself (:meth:`Kernel.saved`): no relay through the tree. Every thread
of the tree is a daemon thread: a runtime still running at interpreter exit is stopped by its
``atexit`` hook instead.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors.memory import InMemoryStore
from praxo_actors.runtime._events._events import EventBus, EventRouter
from praxo_actors.runtime._store._store_actor import LoopStoreActor, StoreActor
from supervisors import ChildSpec, DynamicSupervisor, Supervisor

if TYPE_CHECKING:
    from praxo_actors.actors import LoopScheduler
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["Tree"]


class _Root(Supervisor):
    """The runtime's root supervisor, on a daemon thread."""

    use_daemon_thread = True


class _Sessions(DynamicSupervisor):
    """The sessions supervisor, on a daemon thread."""

    use_daemon_thread = True


class Tree:
    """Start the tree (on a thread that is not the loop's: it waits on the loop's actors)."""

    def __init__(
        self,
        store: Any,
        kernel: Kernel,
        bus: EventRouter,
        loop_scheduler: LoopScheduler,
        timeout: float,
    ) -> None:
        self.store = store
        self.kernel = kernel
        self.bus = bus
        self.loop_scheduler = loop_scheduler
        # Exactly the in-memory store: a subclass may block (a test double, a write-through).
        self.store_on_loop = type(store) is InMemoryStore
        self.root: pykka.ActorRef[Any] = _Root.start(
            [
                ChildSpec("events", self._start_bus, shutdown=timeout),
                ChildSpec("store", self._start_store, shutdown=timeout),
                ChildSpec("sessions", self._start_sessions, type="supervisor", shutdown=timeout),
            ],
            strategy="rest_for_one",
            name="praxo-runtime",
        )

    def _start_bus(self) -> pykka.ActorRef[Any]:
        ref: pykka.ActorRef[Any] = EventBus.start(self.bus)
        self.kernel.post(self.kernel.child_started, "events", ref)
        return ref

    def _start_store(self) -> pykka.ActorRef[Any]:
        # The runtime, not the actor, closes a store it opened: a restarted store actor
        # (rest_for_one after a bus crash) must find it open.
        ref: pykka.ActorRef[Any]
        saved = functools.partial(self.kernel.host.gate.post, self.kernel.saved)
        if self.store_on_loop:
            ref = LoopStoreActor.start(self.store, saved, actor_scheduler=self.loop_scheduler)
        else:
            ref = StoreActor.start(self.store, saved)
        self.kernel.post(self.kernel.child_started, "store", ref)
        return ref

    def _start_sessions(self) -> pykka.ActorRef[Any]:
        ref: pykka.ActorRef[Any] = _Sessions.start(max_restarts=0, name="sessions")
        self.kernel.post(self.kernel.child_started, "sessions", ref, ref.proxy())
        return ref
