"""Starting a runtime: its loop (a thread of its own, or the caller's), its machine, its tree.

:meth:`Runtime.start <praxo_actors.runtime.Runtime.start>` and ``astart`` build the object here
(``Runtime()`` itself refuses), then start its supervision tree off the loop's thread; a runtime
that fails to start leaves no thread, store lock or tree behind.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from praxo_actors._errors import PraxoError
from praxo_actors._log import get_logger
from praxo_actors.actors import forbid_blocking
from praxo_actors.actors import in_thread as _in_thread
from praxo_actors.actors import serve_loop as _serve
from praxo_actors.memory import Store
from praxo_actors.runtime._front._agent_tool import track
from praxo_actors.runtime._front._bus import Events
from praxo_actors.runtime._front._config import RuntimeConfig
from praxo_actors.runtime._front._machine import Machine, open_store
from praxo_actors.runtime._schedule._runner import ScheduleRunner

if TYPE_CHECKING:
    from praxo_actors.runtime._front._runtime import Runtime

__all__ = ["astart", "start"]

logger = get_logger("praxo_actors.runtime")

# None for an InMemoryStore, a path for a SQLiteStore, or a store object.
StoreArg = str | Path | Store | None


def start(cls: type[Runtime], config: RuntimeConfig, store: StoreArg) -> Runtime:
    """See :meth:`Runtime.start` (``config`` checked)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=_serve, args=(loop,), name="praxo-loop", daemon=True)
    thread.start()
    assert thread.ident is not None
    try:
        runtime = _create(cls, config, store, loop, thread.ident, thread)
    except BaseException:  # e.g. STORE_LOCKED: the loop thread must not outlive it
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
        raise
    try:
        _build(runtime)
    except BaseException:
        runtime._machine.claim_stop()
        runtime._machine.shutdown(runtime._at_exit)
        raise
    return runtime


async def astart(cls: type[Runtime], config: RuntimeConfig, store: StoreArg) -> Runtime:
    """See :meth:`Runtime.astart` (``config`` checked)."""
    loop = asyncio.get_running_loop()
    runtime = _create(cls, config, store, loop, threading.get_ident(), None)
    forbid_blocking(1)
    try:
        await _in_thread(lambda: _build(runtime))
    except BaseException:
        runtime._machine.claim_stop()
        await _in_thread(lambda: runtime._machine.shutdown(runtime._at_exit))
        raise
    return runtime


def _create(
    cls: type[Runtime],
    config: RuntimeConfig,
    store: StoreArg,
    loop: asyncio.AbstractEventLoop,
    loop_thread_id: int,
    loop_thread: threading.Thread | None,
) -> Runtime:
    runtime = object.__new__(cls)
    runtime._config = config
    runtime.store, owns_store = open_store(store)
    try:
        machine = Machine(config, runtime.store, owns_store, loop, loop_thread_id, loop_thread)
    except PraxoError:
        if owns_store:
            runtime.store.close()
        raise
    runtime._machine = machine
    runtime._kernel = machine.kernel
    # A script that forgets stop() still stops the runtime on its way out (every runtime
    # thread is a daemon, so the interpreter reaches its atexit hooks).
    runtime._at_exit = functools.partial(_stop_at_exit, weakref.ref(runtime))
    atexit.register(runtime._at_exit)
    runtime.events = Events(machine.bus)
    runtime.registry = machine.registry
    runtime._schedules = ScheduleRunner(runtime, machine.kernel, config.clock, config.timeout)
    track(runtime)
    return runtime


def _build(runtime: Runtime) -> None:
    """Start the supervision tree (on a thread that is not the loop's: it waits on it)."""
    runtime.root = runtime._machine.build()
    if runtime._config.resume:
        runtime._schedules.start()
    _observe(runtime)
    logger.info("runtime_started", store=type(runtime.store).__name__)


def _observe(runtime: Runtime) -> None:
    """Report the runtime's statistics as metrics, when a meter provider is set."""
    provider = runtime._machine.meter_provider()
    if provider is not None:
        from praxo_actors.runtime._front._metrics import observe_runtime

        observe_runtime(runtime, provider)


def _stop_at_exit(ref: weakref.ReferenceType[Runtime]) -> None:
    runtime = ref()
    if runtime is not None:
        with contextlib.suppress(Exception):
            runtime.stop()
