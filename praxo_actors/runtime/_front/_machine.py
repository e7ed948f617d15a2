"""The runtime's parts, built in dependency order and stopped in reverse.

::

    loop (owned, or the caller's) → schedulers, I/O pool, event router, agents
      → Kernel (builds its SessionHost, Activator, ResumeFinder, tables)
      → Tree (bus, store, sessions supervisor: each start function posts its ref to the kernel)

Stopping: refuse new runs on the loop, stop the tree, fail what is left, then the threads and
the store. Every part is built before anything uses it, so no field is set afterwards.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pykka

from praxo_actors._errors import PraxoError
from praxo_actors._log import get_logger
from praxo_actors.actors import IOPool, LoopScheduler, Scheduler, forbid_blocking
from praxo_actors.actors._checks import set_owner
from praxo_actors.codes import RUNTIME_TIMEOUT, STORE_FAILED
from praxo_actors.memory import InMemoryStore, SQLiteStore, Store
from praxo_actors.runtime._events._events import EventRouter
from praxo_actors.runtime._front._config import RuntimeConfig
from praxo_actors.runtime._front._inspect import interrupted_run
from praxo_actors.runtime._kernel._agents import Agents
from praxo_actors.runtime._kernel._clock import LoopClock, Timer
from praxo_actors.runtime._kernel._kernel import Kernel
from praxo_actors.runtime._kernel._resume import Resumer
from praxo_actors.runtime._kernel._tree import Tree
from praxo_actors.runtime._store._lease import lease
from supervisors import Registry

__all__ = ["Machine", "open_store"]

logger = get_logger("praxo_actors.runtime")


def open_store(store: str | Path | Store | None) -> tuple[Store, bool]:
    """Return the store to use and whether the runtime owns (and closes) it.

    Raises:
        PraxoError: ``STORE_FAILED`` when the folder of a path cannot be made.
    """
    if store is None:
        return InMemoryStore(), True
    if isinstance(store, str | Path):
        try:
            Path(store).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise PraxoError(STORE_FAILED, f"cannot make the folder of {store}: {exc}") from None
        return SQLiteStore(store), True
    return store, False


class Machine:
    """Own the loop's helpers, the kernel, the tree and the store's lease of one runtime."""

    def __init__(
        self,
        config: RuntimeConfig,
        store: Store,
        owns_store: bool,
        loop: asyncio.AbstractEventLoop,
        loop_thread_id: int,
        loop_thread: threading.Thread | None,
    ) -> None:
        self.config = config
        self.store = store
        self.owns_store = owns_store
        self.release_store = lease(store)  # STORE_LOCKED before anything else starts
        self.loop = loop
        self.loop_thread = loop_thread
        self.janitor: Timer | None = None
        self.stopped = False
        self._stop_lock = threading.Lock()
        self._stop_done = threading.Event()
        self.root: pykka.ActorRef[Any] | None = None
        clock = LoopClock(loop, loop_thread_id, config.clock, config.timeout)
        self.loop_scheduler = LoopScheduler(loop, loop_thread_id)
        n = config.scheduler_threads
        self.thread_scheduler = None if n is None else Scheduler(n, name="praxo-sessions")
        self.io_pool = IOPool(config.io_threads)
        self.bus = EventRouter(
            config.delivery_threads,
            config.subscriber_timeout,
            subscriber_handoff=config.subscriber_handoff,
        )
        self.registry = Registry()
        self.agents = Agents(config.tracer_provider, config.meter_provider)
        self.kernel = Kernel(
            loop=loop,
            loop_thread_id=loop_thread_id,
            store=store,
            agents=self.agents,
            bus=self.bus,
            registry=self.registry,
            io_pool=self.io_pool,
            loop_scheduler=self.loop_scheduler,
            session_scheduler=self.loop_scheduler if n is None else self.thread_scheduler,
            clock=clock,
            lookup=interrupted_run,
            key=config.checkpoint_key,
            allowed_types=config.allowed_types,
            max_live_sessions=config.max_live_sessions,
            max_queue=config.max_queue,
            on_busy=config.on_busy,
            timeout=config.timeout,
            versions_kept=config.versions_kept,
        )
        self.resumer = Resumer(self.kernel, self.agents, config.timeout)
        set_owner(self.resumer, loop_thread_id)

    def build(self) -> pykka.ActorRef[Any]:
        """Start the supervision tree (on a thread that is not the loop's: it waits on it)."""
        config = self.config
        tree = Tree(self.store, self.kernel, self.bus, self.loop_scheduler, config.timeout)
        self.root = tree.root
        if config.idle_timeout is not None:
            self.kernel.call(self._schedule_janitor, timeout=config.timeout)
        if config.resume:
            self.resumer.plan()
        return tree.root

    def register_agent(
        self, name: str, factory: Callable[[], Any], per_session: bool, durable: bool
    ) -> None:
        """Register an agent and wake the sessions waiting for it (on the loop's thread)."""
        self.agents.register(name, factory, per_session, durable)
        if self.config.resume:
            self.resumer.agent_registered(name)

    def meter_provider(self) -> Any:
        """The meter provider for the runtime's metrics: its own, else the global one, or None."""
        provider = self.config.meter_provider
        if provider is None and "opentelemetry.metrics" in sys.modules:
            # Only when loaded: with no global provider set, OpenTelemetry is not even imported.
            from praxo_actors.agent._tracing import global_meter_provider

            provider = global_meter_provider()
        return provider

    def _schedule_janitor(self) -> None:
        idle = self.config.idle_timeout
        assert idle is not None
        interval = max(min(idle / 2, 30.0), 0.05)
        self.janitor = self.kernel.clock.call_later(interval, self._janitor_tick)

    def _janitor_tick(self) -> None:
        assert self.config.idle_timeout is not None
        self.kernel.passivate_idle(self.config.idle_timeout)
        self._schedule_janitor()

    # -- stopping -------------------------------------------------------------------------------

    def claim_stop(self) -> bool:
        """Mark the runtime as stopping; return True for the first caller (who stops it)."""
        with self._stop_lock:
            first = not self.stopped
            self.stopped = True
        return first

    def wait_stopped(self) -> None:
        """Wait for the first caller's stop to end.

        Raises:
            PraxoError: ``RUNTIME_TIMEOUT`` after six times the runtime's ``timeout``.
        """
        if not self._stop_done.wait(self.config.timeout * 6):
            raise PraxoError(RUNTIME_TIMEOUT, "the runtime is still stopping")

    def shutdown(self, at_exit: Callable[[], None]) -> None:
        """Stop every part, in order, on a thread that is not the loop's."""
        try:
            self._shutdown(at_exit)
        finally:
            self._stop_done.set()

    def _shutdown(self, at_exit: Callable[[], None]) -> None:
        atexit.unregister(at_exit)
        timeout = self.config.timeout
        if not self.loop.is_running():
            # The loop is gone (a process exiting without stop()): nothing can run the
            # sessions' stop any more, so mark them dead instead of waiting on each.
            self.loop_scheduler.shutdown()
        with contextlib.suppress(PraxoError):
            self.kernel.call(self._begin_stop, timeout=timeout)
        self._stop_tree(timeout)
        try:
            self.kernel.call(self._finish_stop, timeout=timeout)
        except PraxoError:
            self.kernel.release()  # the loop is gone: nothing else touches the kernel now
            self.kernel.stop_all()
        self.bus.close(timeout=timeout)
        for name in self.io_pool.shutdown(timeout):
            logger.error("io_thread_abandoned", thread=name)
        if self.thread_scheduler is not None:
            self.thread_scheduler.shutdown(timeout=timeout)
        self._close_store()
        thread = self.loop_thread
        if thread is not None:
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(self.loop.stop)
            thread.join(timeout)
            if not thread.is_alive():
                self.loop.close()
                self.kernel.release()  # a stopped runtime's statistics read it from here on
        logger.info("runtime_stopped")

    def _stop_tree(self, timeout: float) -> None:
        root = self.root
        if root is None:
            return
        try:
            root.stop(timeout=timeout * 4)
        except pykka.ActorDeadError:
            pass  # the tree is already down (escalated past its restart budget)
        except pykka.Timeout:
            # Children past their shutdown time are abandoned by their supervisors; the
            # root itself did not answer in time. Release everything else regardless.
            logger.error("runtime_stop_timeout", timeout=timeout * 4)

    def _begin_stop(self) -> None:
        self.kernel.begin_stop()
        if self.janitor is not None:
            self.janitor.cancel()

    def _finish_stop(self) -> None:
        # Runs posted up to now reach the stopping kernel (refused RUNTIME_STOPPED); later
        # posts are refused by the gate at once, never left queued to a loop about to stop.
        self.kernel.host.gate.close()
        self.kernel.close()
        self.loop_scheduler.shutdown()
        if self.loop_thread is None:
            forbid_blocking(-1)  # the caller's loop thread is its own again

    def _close_store(self) -> None:
        self.release_store()
        close = getattr(self.store, "close", None)
        if self.owns_store and callable(close):
            try:
                close()
            except Exception as exc:  # stopping goes on: the threads are already released
                logger.error("store_close_failed", error=repr(exc))
