"""The kernel's ties to the rest of the runtime: its entries from any thread, which post their
work onto the loop that owns the kernel, and the refs of the tree's children and the front.

:class:`KernelEntries` is a base of :class:`~praxo_actors.runtime._kernel._kernel.Kernel`: its
methods are the kernel's, with no call added in between. They read only the kernel's
:class:`~praxo_actors.runtime._kernel._host.SessionHost` (whose gate and scheduler are safe from
any thread) and, on the loop, the refs the tree's start functions hand over by a post
(:meth:`KernelEntries.child_started`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pykka

from praxo_actors._errors import AgentError
from praxo_actors.actors import MNFuture
from praxo_actors.actors._checks import any_thread, loop_owned
from praxo_actors.codes import RUNTIME_STOPPED
from praxo_actors.runtime._kernel._runs import fail

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["KernelEntries"]

T = TypeVar("T")


@loop_owned
class KernelEntries:
    """Run work on the kernel's loop from any thread; hold the refs of the tree's children
    (a base of the kernel)."""

    host: SessionHost
    # The tree's children, handed over by their start functions (None until started).
    store_ref: pykka.ActorRef[Any] | None
    bus_ref: pykka.ActorRef[Any] | None
    sessions_ref: pykka.ActorRef[Any] | None
    sessions: Any  # the sessions supervisor's proxy, with its ref
    # The runtime's front (a weakref), handed over once by a post (:meth:`attach_front`).
    front: Callable[[], Any]

    @any_thread
    def post(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Run ``fn(*args)`` on the loop thread (any thread); False if the loop is closed."""
        return self.host.gate.post(fn, *args)

    @any_thread
    def post_now(self, fn: Callable[..., Any], *args: Any) -> bool:
        """:meth:`post`, then run what it made ready now when on the loop outside a turn (a
        run submitted from a coroutine on the loop starts in the same step)."""
        # run_after, not post then run_now: the put of a StartRun then schedules no drain
        # callback that run_now would only cancel. On the loop's thread the gate's post is
        # the call itself (unless the gate has closed).
        host = self.host
        gate = host.gate
        if threading.get_ident() != gate.thread_id:
            return gate.post(fn, *args)
        if gate.closed:
            return False
        host.loop_scheduler.run_after(fn, *args)
        return True

    @any_thread
    def call(self, fn: Callable[..., T], *args: Any, timeout: float) -> T:
        """Run ``fn(*args)`` on the loop thread and return its result (any thread).

        Raises:
            PraxoError: ``RUNTIME_STOPPED`` if the loop is closed; ``RUNTIME_TIMEOUT``.
        """
        return self.host.gate.call(fn, *args, timeout=timeout)

    @any_thread
    def ask_store(self, message: bytes) -> MNFuture[Any]:
        """Ask the store actor (any thread), through the loop that holds its current ref.

        The future fails with ``RUNTIME_STOPPED`` when the store has stopped.
        """
        reply: MNFuture[Any] = MNFuture()
        if not self.post(self._ask_store, message, reply):
            fail(reply, AgentError(RUNTIME_STOPPED, "the runtime has stopped"))
        return reply

    def _ask_store(self, message: bytes, reply: MNFuture[Any]) -> None:
        ref = self.store_ref
        try:
            if ref is None:
                raise pykka.ActorDeadError("no store actor")
            answer = ref.ask(message, block=False)
        except pykka.ActorDeadError:
            fail(reply, AgentError(RUNTIME_STOPPED, "the runtime has stopped"))
            return

        def relay(done: Any) -> None:
            try:
                reply.set(done.get(timeout=0))
            except pykka.ActorDeadError:  # it stopped before it read the message
                fail(reply, AgentError(RUNTIME_STOPPED, "the runtime has stopped"))
            except Exception:
                reply.set_exception()

        # The store actors answer with an MNFuture, which takes a done callback.
        cast("MNFuture[Any]", answer).add_done_callback(relay)

    def attach_front(self, front: Callable[[], Any]) -> None:
        """Take the (weak) ref of the runtime's front, for the callbacks that need it."""
        self.front = front

    def bus_actor(self) -> pykka.ActorRef[Any] | None:
        """Return the event bus actor's current ref (None before it started); other threads
        ask it with :meth:`call`, and keep what they got only for one exchange."""
        return self.bus_ref

    def child_started(self, name: str, ref: pykka.ActorRef[Any], proxy: Any = None) -> None:
        """Take the ref of a (re)started child of the tree: ``store``, ``events``, or
        ``sessions`` (with its proxy, made on the starting thread)."""
        if name == "store":
            self.store_ref = ref
        elif name == "events":
            self.bus_ref = ref
        else:
            self.sessions_ref, self.sessions = ref, proxy
