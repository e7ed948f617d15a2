"""What a session actor may use of its runtime: read-only parts and ways to reach the router.

The router (routing, pending runs, counters) is touched only on the runtime's loop thread.
Sessions reach it through :meth:`SessionHost.post`: a direct call when the session runs on the
loop (the default), ``call_soon_threadsafe`` when sessions run on scheduler threads.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors.agent import AgentOptions
from praxo_actors.runtime._bridge import LoopBridge
from praxo_actors.runtime._iopool import IOPool
from praxo_actors.runtime._loop_sched import LoopScheduler

if TYPE_CHECKING:
    from praxo_actors.runtime._router import Router

__all__ = ["SessionHost"]

Outcome = Callable[[bool, Any], None]


@dataclass(eq=False, slots=True)
class SessionHost:
    """Shared by every session actor of one runtime; fields are set once, at start."""

    loop: asyncio.AbstractEventLoop
    loop_thread_id: int
    bridge: LoopBridge
    io_pool: IOPool
    key: bytes | None
    allowed_types: frozenset[str]
    sessions_on_loop: bool
    loop_scheduler: LoopScheduler
    router: Router = None  # type: ignore[assignment]  # set by the runtime, before any session
    store_ref: pykka.ActorRef[Any] = None  # type: ignore[assignment]
    bus_ref: pykka.ActorRef[Any] = None  # type: ignore[assignment]

    def post(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Run ``fn(*args)`` on the loop thread: now if this is it, else as soon as it can.

        Return False if the loop is closed (the runtime has stopped and settled every run).
        """
        if threading.get_ident() == self.loop_thread_id:
            fn(*args)
            return True
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:
            return False
        return True

    def spawn(
        self, fn: Callable[..., Coroutine[Any, Any, Any]], args: tuple[Any, ...], done: Outcome
    ) -> None:
        """Start ``fn(*args)`` as a task on the loop; ``done(ok, value)`` when it ends."""
        if threading.get_ident() == self.loop_thread_id:
            self.bridge.start(fn, args, done)
        else:
            self.bridge.submit(fn, args, done)

    spawn_threadsafe = spawn

    def run_now(self) -> None:
        """Run the loop's ready actors now, when called on the loop thread outside a turn."""
        self.loop_scheduler.run_now()

    def options_for(self, agent: str, events: bool) -> AgentOptions:
        """Return a registered agent's options (see :meth:`Router.options_for`)."""
        return self.router.agents.options_for(agent, events)

    def has_subscribers(self) -> bool:
        """Return whether any event subscription exists (events are built only then)."""
        return self.router.bus.subscription_count > 0
