"""What a session actor may use of its runtime: read-only parts and ways to reach the kernel.

The kernel (routing, pending runs, counters) is touched only on the runtime's loop thread.
Sessions reach it through :meth:`SessionHost.post`: a direct call when the session runs on the
loop (the default), ``call_soon_threadsafe`` when sessions run on scheduler threads. The kernel
builds its host (passing itself), so no field here is set after construction.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from contextvars import Context, ContextVar, copy_context
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from praxo_actors._log import get_logger
from praxo_actors.actors import IOPool, LoopBridge, LoopGate, LoopScheduler
from praxo_actors.actors._checks import set_owner
from praxo_actors.agent import AgentOptions
from praxo_actors.runtime._kernel._clock import LoopClock, Timer

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["SessionHost", "current_host"]

logger = get_logger("praxo_actors.runtime")

Outcome = Callable[[bool, Any], None]
T = TypeVar("T")


_current: ContextVar[SessionHost | None] = ContextVar("praxo_session_host", default=None)


def current_host() -> SessionHost | None:
    """Return the host whose session started the running callback (None outside one)."""
    return _current.get()


@dataclass(eq=False, slots=True)
class SessionHost:
    """Shared by every session actor of one runtime; every field is set at construction."""

    loop: asyncio.AbstractEventLoop
    loop_thread_id: int
    bridge: LoopBridge
    io_pool: IOPool
    key: bytes | None
    allowed_types: frozenset[str]
    loop_scheduler: LoopScheduler
    clock: LoopClock
    kernel: Kernel
    gate: LoopGate = field(init=False)

    def __post_init__(self) -> None:
        set_owner(self.bridge, self.loop_thread_id)
        self.gate = LoopGate(
            self.loop, self.loop_thread_id, after_posted=self.loop_scheduler.run_now
        )

    @property
    def router(self) -> Kernel:
        """The kernel (its methods run on the loop thread: reach them through :meth:`post`)."""
        return self.kernel

    def post(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Run ``fn(*args)`` on the loop thread (see :meth:`LoopGate.post`).

        Return False if the loop is closed (the runtime has stopped and settled every run).
        """
        return self.gate.post(fn, *args)

    def call(self, fn: Callable[..., T], *args: Any, timeout: float) -> T:
        """Run ``fn(*args)`` on the loop thread and return its result (from any thread).

        Raises:
            PraxoError: ``RUNTIME_STOPPED`` if the loop is closed; ``RUNTIME_TIMEOUT``.
        """
        return self.gate.call(fn, *args, timeout=timeout)

    def spawn(
        self,
        fn: Callable[..., Coroutine[Any, Any, Any]],
        args: tuple[Any, ...],
        done: Outcome,
        context: Context | None = None,
    ) -> asyncio.Task[Any] | None:
        """Start ``fn(*args)`` as a task on the loop, in ``context``; then ``done(ok, value)``.

        Return the task when started on the loop's thread (None from elsewhere: it starts soon).
        """
        # The callback knows its host (an agent tool finds its runtime so, from its own
        # context: no scan of other runtimes, no state read off their loops).
        context = copy_context() if context is None else context
        context.run(_current.set, self)
        if threading.get_ident() == self.loop_thread_id:
            return self.bridge.start(fn, args, done, context)
        if not self.post(self.bridge.start, fn, args, done, context):
            done(False, RuntimeError("the runtime's event loop is closed"))
        return None

    def spawn_in(
        self,
        wrapper: Callable[..., Coroutine[Any, Any, Any]],
        fn: Callable[..., Coroutine[Any, Any, Any]],
        args: tuple[Any, ...],
        context: Context | None,
        *fields: Any,
    ) -> asyncio.Task[Any]:
        """Start ``fn(*args)`` as a task on the loop, in ``context``, awaited by
        ``wrapper(coro, tasks, *fields)`` (see :meth:`LoopBridge.start_in`). On the loop's
        thread only.

        Raises:
            BaseException: What ``fn`` raised before returning its coroutine.
        """
        context = copy_context() if context is None else context
        context.run(_current.set, self)
        return self.bridge.start_in(wrapper, fn, args, context, *fields)

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> Timer:
        """Call ``fn(*args)`` on the loop after ``delay`` seconds of the runtime's clock (from
        any thread); return a cancellable handle."""
        return self.clock.call_later(delay, fn, *args)

    def run_now(self) -> None:
        """Run the loop's ready actors now, when called on the loop thread outside a turn."""
        self.loop_scheduler.run_now()

    def options_for(self, agent: str, events: bool, session: Any) -> AgentOptions:
        """Return a registered agent's options for ``session`` (see :meth:`Agents.options_for`)."""
        return self.kernel.agents.options_for(agent, events, session)

    def has_subscribers(self) -> bool:
        """Return whether any event subscription exists (events are built only then)."""
        return self.kernel.bus.subscription_count > 0
