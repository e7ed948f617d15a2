"""The runtime: a thin front over its :class:`~praxo_actors.runtime._front._machine.Machine`.

Its supervision tree (:mod:`~praxo_actors.runtime._kernel._tree`, ``rest_for_one``) holds the
event bus, the memory store's actor and the sessions supervisor, whose ``temporary`` children
are the sessions (a crashed session is restored from its checkpoint by its next run; the runs
it held fail with ``SESSION_CRASHED``). Its event loop runs the sessions (by default), their
``async`` callbacks, the in-memory store's actor and the
:class:`~praxo_actors.runtime._kernel._kernel.Kernel`, the one owner of routing.
``Runtime.start`` owns a loop thread; ``Runtime.astart`` and ``Runtime.open`` use the caller's
running loop and own no thread for it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import threading
import weakref
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar, Unpack

import pykka

from praxo_actors._errors import PraxoError
from praxo_actors._log import get_logger
from praxo_actors.actors import check_not_blocking, forbid_blocking
from praxo_actors.actors import in_thread as _in_thread
from praxo_actors.actors import serve_loop as _serve
from praxo_actors.agent import AgentOptions
from praxo_actors.codes import RUNTIME_INVALID_INPUT, RUNTIME_UNKNOWN_AGENT
from praxo_actors.memory import Store
from praxo_actors.models import RunResult
from praxo_actors.runtime._front._agent_tool import track
from praxo_actors.runtime._front._bus import Events
from praxo_actors.runtime._front._by_id import aresult_by_id, result_by_id
from praxo_actors.runtime._front._config import RuntimeConfig, RuntimeOptions, config_from
from praxo_actors.runtime._front._handle import SessionHandle
from praxo_actors.runtime._front._inputs import check_text
from praxo_actors.runtime._front._inspect import (
    SessionInfo,
    check_session_id,
    find,
    list_sessions,
    list_states,
)
from praxo_actors.runtime._front._machine import Machine, open_store
from praxo_actors.runtime._front._on_loop import acall, arun_on_loop, run_on_loop
from praxo_actors.runtime._kernel._agents import Agents, RegisteredAgent
from praxo_actors.runtime._kernel._host import SessionHost
from praxo_actors.runtime._kernel._kernel import Kernel
from praxo_actors.runtime._kernel._statistics import RuntimeStatistics
from praxo_actors.runtime._kernel._waits import check_timeout
from praxo_actors.runtime._schedule import _front as _sched_front
from praxo_actors.runtime._schedule._front import Schedule
from praxo_actors.runtime._schedule._runner import ScheduleRunner
from supervisors import Registry

__all__ = ["Events", "RegisteredAgent", "Runtime", "RuntimeStatistics", "SessionHandle"]

logger = get_logger("praxo_actors.runtime")

T = TypeVar("T")


class Runtime:
    """Host many agent sessions as supervised actors; see :meth:`start` and :meth:`open`."""

    events: Events
    """The event bus: subscriptions and async streams."""
    registry: Registry
    """Live sessions' actors by session id."""
    root: pykka.ActorRef[Any]
    """The root supervisor's ref."""
    store: Store
    """The memory store holding the sessions' checkpoints."""
    _at_exit: Callable[[], None]
    _config: RuntimeConfig
    _kernel: Kernel
    _machine: Machine
    _schedules: ScheduleRunner

    def __init__(self) -> None:
        msg = "use Runtime.start(...), await Runtime.astart(...) or async with Runtime.open(...)"
        raise TypeError(msg)

    @classmethod
    def start(
        cls,
        store: str | Path | Store | None = None,
        *,
        config: RuntimeConfig | None = None,
        **options: Unpack[RuntimeOptions],
    ) -> Runtime:
        """Start the runtime and its supervision tree, with an event loop thread of its own.

        Call it from any thread (not from a running event loop you want it to use: for that,
        ``await Runtime.astart(...)`` or ``async with Runtime.open(...)``).

        Args:
            store: None for an ``InMemoryStore``; a path for a ``SQLiteStore`` (owned and closed
                by the runtime); or a store object (left open).
            config: A :class:`RuntimeConfig` holding the settings below (instead of them as
                keywords: give one or the other).
            **options: The settings of :class:`RuntimeConfig` as keywords (``max_live_sessions``,
                ``max_queue``, ``on_busy``, ``idle_timeout``, ``checkpoint_key``,
                ``allowed_types``, ``scheduler_threads``, ``io_threads``, ``delivery_threads``,
                ``subscriber_timeout``, ``subscriber_handoff``, ``timeout``, ``clock``,
                ``resume``, ``tracer_provider``, ``meter_provider``, ``versions_kept``), each
                described there.

        Raises:
            PraxoError: ``RUNTIME_INVALID_CONFIG`` for bad arguments; ``STORE_LOCKED`` when
                another runtime (in this process or another) holds the store;
                ``STORE_CORRUPT`` when ``store`` is the path of a file that is not a sound
                store database; ``STORE_FAILED`` when that file cannot be opened or locked.
        """
        config = config_from(config, options)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=_serve, args=(loop,), name="praxo-loop", daemon=True)
        thread.start()
        assert thread.ident is not None
        try:
            self = cls._create(config, store, loop, thread.ident, thread)
        except BaseException:  # e.g. STORE_LOCKED: the loop thread must not outlive it
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()
            raise
        try:
            self._build()
        except BaseException:
            self._machine.claim_stop()
            self._machine.shutdown(self._at_exit)
            raise
        return self

    @classmethod
    async def astart(
        cls,
        store: str | Path | Store | None = None,
        *,
        config: RuntimeConfig | None = None,
        **options: Unpack[RuntimeOptions],
    ) -> Runtime:
        """Start the runtime on the running event loop (it owns no loop thread); see :meth:`start`.

        It takes the same settings as :meth:`start`. Stop it with ``await runtime.astop()`` on
        the same loop (or use :meth:`open`).

        Raises:
            PraxoError: As :meth:`start`.
        """
        config = config_from(config, options)
        loop = asyncio.get_running_loop()
        self = cls._create(config, store, loop, threading.get_ident(), None)
        forbid_blocking(1)
        try:
            await _in_thread(self._build)
        except BaseException:
            self._machine.claim_stop()
            await _in_thread(lambda: self._machine.shutdown(self._at_exit))
            raise
        return self

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        store: str | Path | Store | None = None,
        *,
        config: RuntimeConfig | None = None,
        **options: Unpack[RuntimeOptions],
    ) -> AsyncIterator[Runtime]:
        """``async with Runtime.open(...) as runtime``: :meth:`astart`, then :meth:`astop`.

        It takes the same settings as :meth:`start`.
        """
        runtime = await cls.astart(store, config=config_from(config, options))
        try:
            yield runtime
        finally:
            await runtime.astop()

    @classmethod
    def _create(
        cls,
        config: RuntimeConfig,
        store: str | Path | Store | None,
        loop: asyncio.AbstractEventLoop,
        loop_thread_id: int,
        loop_thread: threading.Thread | None,
    ) -> Runtime:
        self = object.__new__(cls)
        self._config = config
        self.store, owns_store = open_store(store)
        try:
            machine = Machine(config, self.store, owns_store, loop, loop_thread_id, loop_thread)
        except PraxoError:
            if owns_store:
                self.store.close()
            raise
        self._machine = machine
        self._kernel = machine.kernel
        # A script that forgets stop() still stops the runtime on its way out (every runtime
        # thread is a daemon, so the interpreter reaches its atexit hooks).
        self._at_exit = functools.partial(_stop_at_exit, weakref.ref(self))
        atexit.register(self._at_exit)
        self.events = Events(machine.bus)
        self.registry = machine.registry
        self._schedules = ScheduleRunner(self, machine.kernel, config.clock, config.timeout)
        track(self)
        return self

    def _build(self) -> None:
        """Start the supervision tree (on a thread that is not the loop's: it waits on it)."""
        self.root = self._machine.build()
        if self._config.resume:
            self._schedules.start()
        self._observe()
        logger.info("runtime_started", store=type(self.store).__name__)

    def _observe(self) -> None:
        """Report the runtime's statistics as metrics, when a meter provider is set."""
        provider = self._machine.meter_provider()
        if provider is not None:
            from praxo_actors.runtime._front._metrics import observe_runtime

            observe_runtime(self, provider)

    @property
    def _host(self) -> SessionHost:
        """The kernel's host (tests and diagnostics)."""
        return self._kernel.host

    @property
    def _router(self) -> Kernel:
        """The kernel, under the name modules of the event bus still use."""
        return self._kernel

    @property
    def _store_ref(self) -> pykka.ActorRef[Any] | None:
        """The store actor's current ref, as the kernel holds it (tests, diagnostics)."""
        kernel = self._kernel
        return kernel.call(lambda: kernel.store_ref, timeout=self._config.timeout)

    @property
    def _sessions_ref(self) -> pykka.ActorRef[Any] | None:
        """The sessions supervisor's current ref, as the kernel holds it (tests, diagnostics)."""
        kernel = self._kernel
        return kernel.call(lambda: kernel.sessions_ref, timeout=self._config.timeout)

    # -- agents and sessions ---------------------------------------------------------------

    def register_agent(
        self,
        name: str,
        options_factory: Callable[[], AgentOptions],
        per_session: bool = False,
        durable: bool = False,
    ) -> None:
        """Register an agent by name; ``options_factory()`` builds its options lazily.

        Args:
            name: The agent's name, as given to :meth:`session`.
            options_factory: Returns the agent's ``AgentOptions``; called once for the runtime
                or, with ``per_session``, once for each session when it first runs the agent
                after activating (so a stateful model belongs to one session).
            per_session: Build the options per session instead of once.
            durable: Journal every completed effect of its runs in the store, so that a run cut
                off by a crash resumes where it was, repeating no completed model or tool call
                (see docs/how-to/durability.md).

        Raises:
            PraxoError: ``RUNTIME_INVALID_CONFIG`` for a bad name, factory or flag;
                ``RUNTIME_STOPPED`` once the runtime has stopped.
        """
        Agents.check(name, options_factory, per_session, durable)
        self._call(
            self._machine.register_agent,
            name,
            options_factory,
            per_session,
            durable,
            timeout=self._config.timeout,
        )
        self._schedules.agent_registered(name)

    def inspect(self, session_id: str, timeout: float = 5.0) -> SessionInfo:
        """Return what session ``session_id`` is doing now (see :class:`SessionInfo`).

        The runtime's loop answers (its router owns what is live), within ``timeout``.

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT``, ``RUNTIME_TIMEOUT``, ``RUNTIME_STOPPED``, or
                ``RUNTIME_BLOCKING_CALL`` on the runtime's loop thread (use :meth:`ainspect`).
        """
        check_session_id(session_id)
        check_timeout(timeout)
        check_not_blocking("Runtime.inspect()")
        return run_on_loop(self._host, lambda: self._info(session_id), timeout)

    def sessions(
        self, state: str | None = None, limit: int = 1000, timeout: float = 5.0
    ) -> list[SessionInfo]:
        """Return up to ``limit`` sessions, live and activating ones first, then passivated ones
        from the store (in id order); ``state`` keeps one state only.

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT`` for a bad state or limit; as :meth:`inspect`.
        """
        list_states(state, limit)
        check_timeout(timeout)
        check_not_blocking("Runtime.sessions()")
        return run_on_loop(self._host, lambda: list_sessions(self._kernel, state, limit), timeout)

    async def ainspect(self, session_id: str, timeout: float = 5.0) -> SessionInfo:
        """:meth:`inspect`, awaited (safe on the runtime's own loop)."""
        check_session_id(session_id)
        check_timeout(timeout)
        return await arun_on_loop(self._host, lambda: self._info(session_id), timeout)

    async def asessions(
        self, state: str | None = None, limit: int = 1000, timeout: float = 5.0
    ) -> list[SessionInfo]:
        """:meth:`sessions`, awaited (safe on the runtime's own loop)."""
        list_states(state, limit)
        check_timeout(timeout)
        listing = lambda: list_sessions(self._kernel, state, limit)  # noqa: E731
        return await arun_on_loop(self._host, listing, timeout)

    async def _info(self, session_id: str) -> SessionInfo:
        return (await find(self._kernel, session_id))[0]

    def resume_pending(self) -> int:
        """Restore every session whose durable run a previous process left journaled.

        Each such run resumes (its completed effects replayed, not repeated) and ends as any
        run does; ``session(id).result(run_id)`` waits for it. Sessions whose agent is not
        registered yet are left as they are. Return how many sessions were restored.

        Raises:
            PraxoError: ``RUNTIME_STOPPED``, ``RUNTIME_TIMEOUT``, ``STORE_FAILED``, or
                ``RUNTIME_BLOCKING_CALL`` on the runtime's loop thread (use
                :meth:`aresume_pending`).
        """
        check_not_blocking("resume_pending()")
        return self._machine.resumer.resume_pending()

    async def aresume_pending(self) -> int:
        """:meth:`resume_pending`, awaited (safe on the runtime's own loop)."""
        return await self._machine.resumer.aresume_pending()

    def session(self, session_id: str, agent: str | None = None) -> SessionHandle:
        """Return a handle on session ``session_id`` run by the registered ``agent``.

        With no ``agent``, the session runs each run with the agent it was last run with: the
        newest run's waiting or in flight before it, else the last committed run's (kept in
        its log, across restarts; a run that failed does not count), or ``"default"`` for a
        session never run. One that is not registered fails the run with
        ``RUNTIME_UNKNOWN_AGENT``. Making the handle reads nothing; ``handle.agent`` reads it.

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT`` for a bad id or agent;
                ``RUNTIME_UNKNOWN_AGENT`` for an agent given that is not registered, or no
                agent given while none is registered.
        """
        if not isinstance(session_id, str) or not session_id or "\x00" in session_id:
            raise PraxoError(RUNTIME_INVALID_INPUT, "session id must be a non-empty str")
        check_text(session_id, "the session id")
        if agent is None:
            if not self._kernel.agents.view().factories:
                raise PraxoError(RUNTIME_UNKNOWN_AGENT, "no agent is registered")
        elif not isinstance(agent, str):
            raise PraxoError(RUNTIME_INVALID_INPUT, "agent must be a str or None")
        elif agent not in self._kernel.agents:
            raise PraxoError(RUNTIME_UNKNOWN_AGENT, f"no agent registered as {agent!r}")
        return SessionHandle(self, self._kernel, session_id, agent)

    def agents(self) -> dict[str, RegisteredAgent]:
        """Return the registered agents by name, in name order (a copy: read-only).

        Safe from any thread, the runtime's loop included; an agent registered by
        :meth:`register_agent` is listed once that call has returned.
        """
        return self._kernel.agents.registered()

    def result(self, run_id: str, timeout: float | None = None) -> RunResult:
        """Return the result of run ``run_id``, found by its id alone, or raise its error.

        As :meth:`SessionHandle.result`, with no session to name: a run pending in this
        process is waited for; a finished one is read from the results its session keeps (its
        last 100; the store indexes them by run id); a durable run accepted or left journaled
        by a previous process is resumed (its session restored) and waited for. ``timeout``
        bounds the wait for a run still going (None: as long as it takes; 0 polls); each
        store look-up is bounded by the runtime's ``timeout``. On the runtime's loop use
        :meth:`aresult`.

        Raises:
            AgentError: The run's own error (its code).
            PraxoError: ``RUNTIME_UNKNOWN_RUN`` for an id no session knows (or whose result
                its session no longer keeps); ``RUNTIME_TIMEOUT``; ``RUNTIME_STOPPED``;
                ``RUNTIME_INVALID_INPUT``; ``RUNTIME_BLOCKING_CALL`` on the loop thread.
        """
        return result_by_id(self, self._kernel, run_id, timeout)

    async def aresult(self, run_id: str, timeout: float | None = None) -> RunResult:
        """:meth:`result`, awaited (safe on the runtime's own loop)."""
        return await aresult_by_id(self, self._kernel, run_id, timeout)

    def schedules(self, session_id: str | None = None) -> list[Schedule]:
        """Return the schedules in the store (one session's with ``session_id``), in id order.

        Raises:
            PraxoError: ``RUNTIME_BLOCKING_CALL`` on the runtime's loop thread (use
                :meth:`aschedules`); ``STORE_FAILED``.
        """
        return _sched_front.schedules(self._schedules, session_id)

    async def aschedules(self, session_id: str | None = None) -> list[Schedule]:
        """:meth:`schedules`, awaited (safe on the runtime's own loop)."""
        return await _sched_front.aschedules(self._schedules, session_id)

    def _call(self, fn: Callable[..., T], *args: Any, timeout: float) -> T:
        """Run ``fn(*args)`` on the loop thread and return its result (see Kernel.call)."""
        return self._kernel.call(fn, *args, timeout=timeout)

    # -- statistics and shutdown -----------------------------------------------------------

    def statistics(self) -> RuntimeStatistics:
        """Return a snapshot of the runtime's counters (the session and run counts agree).

        Off the runtime's loop this waits for the loop's answer (bounded by the runtime's
        ``timeout``); on it, it reads them directly.

        Raises:
            PraxoError: ``RUNTIME_TIMEOUT``.
        """
        if self._stopped and not self._machine.loop.is_running():
            return self._kernel.statistics()
        return self._call(self._kernel.statistics, timeout=self._config.timeout)

    async def astatistics(self) -> RuntimeStatistics:
        """:meth:`statistics`, awaited (it never blocks the caller's loop)."""
        if self._stopped and not self._machine.loop.is_running():
            return self._kernel.statistics()
        return await acall(self._host, self._kernel.statistics, timeout=self._config.timeout)

    def stop(self) -> None:
        """Stop the tree in reverse order (sessions, store, bus) and every runtime thread.

        Runs still pending fail with ``RUNTIME_STOPPED``. Idempotent.

        Raises:
            PraxoError: ``RUNTIME_BLOCKING_CALL`` on the runtime's loop thread (there, use
                ``await runtime.astop()``).
        """
        check_not_blocking("Runtime.stop()")
        self._schedules.close()
        machine = self._machine
        if machine.claim_stop():
            machine.shutdown(self._at_exit)
        else:
            machine.wait_stopped()

    async def astop(self) -> None:
        """Stop the runtime without blocking the running event loop; see :meth:`stop`.

        A second call (or one made while :meth:`stop` runs) returns once the runtime has stopped.
        """
        machine = self._machine
        await _in_thread(self._schedules.close)
        if machine.claim_stop():
            await _in_thread(lambda: machine.shutdown(self._at_exit))
        else:
            await _in_thread(machine.wait_stopped)

    @property
    def _stopped(self) -> bool:
        """Whether :meth:`stop` (or :meth:`astop`) has begun."""
        return self._machine.stopped

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.astop()


def _stop_at_exit(ref: weakref.ReferenceType[Runtime]) -> None:
    runtime = ref()
    if runtime is not None:
        with contextlib.suppress(Exception):
            runtime.stop()
