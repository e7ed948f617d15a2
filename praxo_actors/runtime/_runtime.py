"""The runtime: a supervision tree of sessions, the memory store and the event bus.

::

    root Supervisor (rest_for_one)
    ├── events    EventBus actor           → EventRouter → subscriptions (bounded buffers)
    ├── store     StoreActor               → InMemoryStore | SQLiteStore (checkpoints)
    └── sessions  DynamicSupervisor
                  └── SessionActor × N     (M:N actors, named in a Registry by session id)

``rest_for_one``: if the store actor dies, the sessions (which read and write checkpoints
through it) restart after it; if the bus dies, everything after it restarts. Sessions are
``temporary`` children: thousands of independent conversations must not share one restart
budget (three crashed sessions in five seconds would otherwise stop them all). A crashed session
is restored from its checkpoint by its next run instead, and the runs it held fail with
``SESSION_CRASHED``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import msgspec
import pykka
import structlog

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.agent import AgentOptions, new_run_id
from praxo_actors.core import DEFAULT_CHECKPOINT_TYPES, load_checkpoint
from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.models import Event, Message
from praxo_actors.runtime._core import RunFuture, RuntimeCore, _Entry, _fail
from praxo_actors.runtime._events import EventBus, EventRouter, EventStream, Subscription
from praxo_actors.runtime._iopool import IOPool
from praxo_actors.runtime._protocol import (
    CancelRun,
    Crash,
    GetHistory,
    History,
    LoadCheckpoint,
    Passivate,
    StartRun,
    decode,
    encode,
)
from praxo_actors.runtime._sched import Scheduler
from praxo_actors.runtime._session import SessionActor
from praxo_actors.runtime._store_actor import StoreActor
from supervisors import ChildSpec, DynamicSupervisor, Registry, Supervisor, SupervisorError

__all__ = ["Events", "Runtime", "RuntimeStatistics", "SessionHandle"]

logger = structlog.get_logger("praxo_actors.runtime")


class RuntimeStatistics(msgspec.Struct, frozen=True):
    """A snapshot of the runtime's counters."""

    live_sessions: int
    runs_started: int
    runs_completed: int
    runs_failed: int
    runs_pending: int
    activations: int
    passivations: int
    crashes: int
    events_emitted: int
    events_delivered: int
    events_dropped: int
    subscriptions: int


class Events:
    """The runtime's event bus, seen from outside: subscriptions and async streams."""

    def __init__(self, router: EventRouter) -> None:
        self._router = router

    def subscribe(
        self,
        subscriber: Callable[[Event], Any] | pykka.ActorRef[Any],
        pattern: str = "run.*",
        session_id: str | None = None,
        buffer: int = 1000,
    ) -> Subscription:
        """Deliver matching events to ``subscriber`` (a callable, or an actor that is asked).

        Args:
            subscriber: Called (or, for an ``ActorRef``, asked) with each :class:`Event`, one at
                a time, in order, on a delivery thread. If it raises (or the actor has
                stopped) it is removed.
            pattern: A glob on the event type: ``"run.*"``, ``"tool.*"``, ``"*"``.
            session_id: Only this session's events (None: every session's).
            buffer: Events held for a slow subscriber; beyond that they are dropped and counted.

        Raises:
            PraxoError: ``EVENTS_INVALID_SUBSCRIPTION`` for bad arguments; ``RUNTIME_STOPPED``
                once the runtime has stopped.
        """
        return self._router.subscribe(subscriber, pattern, session_id, buffer)

    def stream(
        self, pattern: str = "run.*", session_id: str | None = None, buffer: int = 1000
    ) -> EventStream:
        """Subscribe now and return an async iterator of matching events.

        Call it from a coroutine (it binds to the running event loop); every event published
        after the call is delivered. It ends when the runtime stops; ``async with
        runtime.events.stream(...) as events`` unsubscribes when the block is left.

        Raises:
            PraxoError: ``EVENTS_INVALID_SUBSCRIPTION`` for bad arguments.
            RuntimeError: No event loop is running in this thread.
        """
        return EventStream(self._router, pattern, session_id, buffer)

    @property
    def subscriptions(self) -> tuple[Subscription, ...]:
        """The active subscriptions."""
        return self._router.subscriptions


class SessionHandle:
    """A lightweight handle on one session; creating it starts nothing."""

    def __init__(self, runtime: Runtime, session_id: str, agent: str) -> None:
        self._runtime = runtime
        self.id = session_id
        self.agent = agent

    def __repr__(self) -> str:
        return f"<SessionHandle {self.id!r} agent={self.agent!r}>"

    def run(self, input: str, deadline: float | None = None) -> RunFuture:
        """Queue a run of ``input``; return its future at once.

        The session is activated (restored from its checkpoint) if it is not live. The future
        gives the :class:`~praxo_actors.models.RunResult`, or raises
        :class:`~praxo_actors.AgentError` (with the run's code), a callback's own exception, or
        :class:`~praxo_actors.PraxoError` (``SESSION_BUSY``, ``SESSION_OVERLOADED``,
        ``RUNTIME_SESSION_LIMIT``, ``SESSION_CRASHED``, ``RUNTIME_STOPPED``...).

        Args:
            input: The user's message text.
            deadline: Seconds from now; checked between steps (``AGENT_DEADLINE``).

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT`` for a non-str input or a bad deadline.
        """
        return self._runtime._run(self, input, deadline)

    def history(self, timeout: float = 5.0) -> list[Message]:
        """Return the session's committed messages (from its checkpoint if it is not live).

        Raises:
            PraxoError: ``RUNTIME_TIMEOUT``, ``RUNTIME_STOPPED``, or a checkpoint code.
        """
        return self._runtime._history(self.id, timeout)

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop the session actor now; runs still pending fail with ``AGENT_CANCELLED``.

        Its committed messages stay in its checkpoint. Return False if it was not live.

        Raises:
            PraxoError: ``RUNTIME_TIMEOUT`` if it has not stopped within ``timeout``.
        """
        return self._runtime._stop_session(self.id, timeout)

    def passivate(self, timeout: float = 5.0) -> bool:
        """Stop the session if it is idle (its state stays in its checkpoint); return success."""
        return self._runtime._passivate(self.id, timeout)

    @property
    def live(self) -> bool:
        """Whether an actor hosts this session now."""
        return self._runtime._core.live.get(self.id) is not None

    def crash_for_testing(self, reason: str = "crash requested") -> None:
        """Make the session actor fail as if its code raised (a test hook for crash recovery)."""
        ref = self._runtime._ref(self.id, timeout=5.0)
        if ref is not None:
            ref.tell(encode(Crash(reason)))


class Runtime:
    """Host many agent sessions as supervised actors; see :meth:`start`."""

    events: Events
    """The event bus: subscriptions and async streams."""
    registry: Registry
    """Live sessions' actors by session id."""
    root: pykka.ActorRef[Any]
    """The root supervisor's ref."""
    store: Any
    """The memory store holding the sessions' checkpoints."""
    _agents: dict[str, Callable[[], AgentOptions]]
    _core: RuntimeCore
    _idle_timeout: float | None
    _io_pool: IOPool
    _activator: IOPool
    _janitor: asyncio.TimerHandle
    _loop: asyncio.AbstractEventLoop
    _loop_thread: threading.Thread
    _owns_store: bool
    _router: EventRouter
    _scheduler: Scheduler
    _sessions: Any
    _sessions_ref: pykka.ActorRef[Any]
    _stop_lock: threading.Lock
    _stopped: bool
    _timeout: float

    def __init__(self) -> None:
        msg = "use Runtime.start(...)"
        raise TypeError(msg)

    @classmethod
    def start(
        cls,
        store: str | Path | Any | None = None,
        *,
        max_live_sessions: int = 100_000,
        max_queue: int = 100,
        on_busy: Literal["enqueue", "reject"] = "enqueue",
        idle_timeout: float | None = 300.0,
        checkpoint_key: bytes | None = None,
        allowed_types: frozenset[str] = DEFAULT_CHECKPOINT_TYPES,
        scheduler_threads: int = 1,
        io_threads: int = 256,
        delivery_threads: int = 4,
        timeout: float = 10.0,
    ) -> Runtime:
        """Start the runtime and its supervision tree.

        Args:
            store: None for an ``InMemoryStore``; a path for a ``SQLiteStore`` (owned and closed
                by the runtime); or a store object (left open).
            max_live_sessions: Live sessions beyond which the least recently used idle one is
                passivated; when none is idle, new sessions get ``RUNTIME_SESSION_LIMIT``.
            max_queue: Runs pending per session beyond the running one
                (``SESSION_OVERLOADED``).
            on_busy: ``"enqueue"`` queues a run behind the running one; ``"reject"`` refuses it
                with ``SESSION_BUSY``.
            idle_timeout: Seconds after which an idle session is passivated (None: never).
            checkpoint_key: HMAC key for checkpoints (so a writer to the store cannot forge
                sessions).
            allowed_types: Checkpoint type tags revived on restore.
            scheduler_threads: Threads shared by all session actors. One by default: session
                work is Python code under the GIL, and measured with 10,000 runs in flight, one
                thread finished in 1.4 s where two took 1.9 s (they contend for the GIL and the
                scheduler's lock). A handler that blocks hands its slot to a spare thread.
            io_threads: Threads for synchronous (blocking) model and tool callbacks.
            delivery_threads: Threads delivering events to subscribers.
            timeout: Bound on each internal wait (activation, store reads, shutdown).

        Raises:
            PraxoError: ``RUNTIME_INVALID_CONFIG`` for bad arguments.
        """
        _check_config(
            max_live_sessions,
            max_queue,
            on_busy,
            idle_timeout,
            io_threads,
            timeout,
            scheduler_threads=scheduler_threads,
            delivery_threads=delivery_threads,
        )
        if checkpoint_key is not None and (
            not isinstance(checkpoint_key, bytes) or not checkpoint_key
        ):
            raise PraxoError("RUNTIME_INVALID_CONFIG", "checkpoint_key must be non-empty bytes")
        if not isinstance(allowed_types, set | frozenset) or not all(
            isinstance(t, str) for t in allowed_types
        ):
            raise PraxoError("RUNTIME_INVALID_CONFIG", "allowed_types must be a set of str")
        if "session" not in allowed_types:
            raise PraxoError(
                "RUNTIME_INVALID_CONFIG", "allowed_types must admit 'session' to restore anything"
            )
        allowed_types = frozenset(allowed_types)
        self = object.__new__(cls)
        self._timeout = timeout
        self._idle_timeout = idle_timeout
        self._agents = {}
        self._owns_store = store is None or isinstance(store, str | Path)
        if store is None:
            store = InMemoryStore()
        elif isinstance(store, str | Path):
            Path(store).parent.mkdir(parents=True, exist_ok=True)
            store = SQLiteStore(store)
        self.store = store
        self._stopped = False
        self._stop_lock = threading.Lock()

        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(
            target=self._loop.run_forever, name="praxo-loop", daemon=True
        )
        self._loop_thread.start()
        self._io_pool = IOPool(io_threads)
        # One thread: the sessions supervisor starts one child at a time anyway.
        self._activator = IOPool(1, name="praxo-activate")
        self._scheduler = Scheduler(scheduler_threads)
        self._router = EventRouter(delivery_threads)
        self.events = Events(self._router)
        self.registry = Registry()
        core = self._core = RuntimeCore(
            agents=self._agents,
            loop=self._loop,
            io_pool=self._io_pool,
            key=checkpoint_key,
            allowed_types=allowed_types,
            max_live_sessions=max_live_sessions,
            max_queue=max_queue,
            on_busy=on_busy,
            store_timeout=timeout,
        )
        core.registry = self.registry
        core.bus = self._router

        def start_bus() -> pykka.ActorRef[Any]:
            core.bus_ref = EventBus.start(self._router)
            return core.bus_ref

        def start_store() -> pykka.ActorRef[Any]:
            # The runtime, not the actor, closes a store it opened: a restarted store actor
            # (rest_for_one after a bus crash) must find it open.
            core.store_ref = StoreActor.start(store, core.checkpoint_saved)
            return core.store_ref

        def start_sessions() -> pykka.ActorRef[Any]:
            ref = DynamicSupervisor.start(max_restarts=0, name="sessions")
            self._sessions_ref = ref
            self._sessions = ref.proxy()
            return ref

        try:
            self.root = Supervisor.start(
                [
                    ChildSpec("events", start_bus, shutdown=timeout),
                    ChildSpec("store", start_store, shutdown=timeout),
                    ChildSpec("sessions", start_sessions, type="supervisor", shutdown=timeout),
                ],
                strategy="rest_for_one",
                name="praxo-runtime",
            )
        except Exception:
            self._release_threads()
            self._close_store()
            raise
        if idle_timeout is not None:
            self._loop.call_soon_threadsafe(self._schedule_janitor)
        logger.info("runtime_started", store=type(store).__name__)
        return self

    # -- agents and sessions ---------------------------------------------------------------

    def register_agent(self, name: str, options_factory: Callable[[], AgentOptions]) -> None:
        """Register an agent by name; ``options_factory()`` builds its options once, lazily.

        Raises:
            PraxoError: ``RUNTIME_INVALID_CONFIG`` for a bad name or a non-callable factory.
        """
        if not isinstance(name, str) or not name:
            raise PraxoError("RUNTIME_INVALID_CONFIG", "agent name must be a non-empty str")
        if not callable(options_factory):
            raise PraxoError("RUNTIME_INVALID_CONFIG", "options_factory must be callable")
        self._agents[name] = options_factory
        self._core._options.pop(name, None)

    def session(self, session_id: str, agent: str = "default") -> SessionHandle:
        """Return a handle on session ``session_id`` run by the registered ``agent``.

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT`` for a bad id; ``RUNTIME_UNKNOWN_AGENT``.
        """
        if not isinstance(session_id, str) or not session_id or "\x00" in session_id:
            raise PraxoError("RUNTIME_INVALID_INPUT", "session id must be a non-empty str")
        if agent not in self._agents:
            raise PraxoError("RUNTIME_UNKNOWN_AGENT", f"no agent registered as {agent!r}")
        return SessionHandle(self, session_id, agent)

    def _run(self, handle: SessionHandle, input: str, deadline: float | None) -> RunFuture:
        if not isinstance(input, str):
            raise PraxoError("RUNTIME_INVALID_INPUT", "input must be a str")
        deadline_ns = None
        if deadline is not None:
            if (
                isinstance(deadline, bool)
                or not isinstance(deadline, int | float)
                or not math.isfinite(deadline)
                or deadline < 0
            ):
                raise PraxoError(
                    "RUNTIME_INVALID_INPUT", "deadline must be a finite number of seconds >= 0"
                )
            deadline_ns = time.monotonic_ns() + int(deadline * 1e9)
        run_id = new_run_id()
        future = RunFuture(run_id, handle.id, self._cancel)
        try:
            entry, activate = self._core.admit(handle.id, run_id, future)
        except PraxoError as exc:
            _fail(future, exc)
            return future
        message = encode(StartRun(run_id, handle.agent, input, deadline_ns))
        with self._core.lock:
            ref = entry.ref
            if ref is None and entry.error is None:
                # Activating: the activator sends it, in order, once the actor is up.
                if entry.backlog is None:
                    entry.backlog = []
                entry.backlog.append((run_id, message))
        if activate:
            # Off the caller's thread: run() never waits on the sessions supervisor, so it is
            # safe to call from an event loop.
            self._activator.submit(self._activate, (handle.id, entry), _ignore)
        if ref is not None:
            self._send(ref, run_id, message)
        return future

    def _send(self, ref: pykka.ActorRef[Any], run_id: str, message: bytes) -> None:
        try:
            ref.tell(message)
        except pykka.ActorDeadError:
            self._undelivered(run_id)

    def _undelivered(self, run_id: str) -> None:
        """Fail a run whose actor stopped between routing and sending.

        The runtime stopped it, or it crashed (its runs, this one among them, are then failed
        with SESSION_CRASHED already: settling twice is a no-op).
        """
        code = "RUNTIME_STOPPED" if self._core.stopping else "SESSION_CRASHED"
        self._core.settle_error(run_id, AgentError(code, "the session stopped", run_id))

    def _activate(self, session_id: str, entry: _Entry) -> pykka.ActorRef[Any] | None:
        core = self._core
        start = _SessionStart(self, session_id, entry)
        spec = ChildSpec(session_id, start, restart="temporary", shutdown=self._timeout)
        try:
            ref: pykka.ActorRef[Any] = self._sessions.start_child(spec).get(timeout=self._timeout)
        except Exception as exc:
            error = (
                PraxoError("RUNTIME_STOPPED", "the runtime is stopping")
                if core.stopping
                else _activation_error(exc)
            )
            with core.lock:
                if core.live.get(session_id) is entry:
                    del core.live[session_id]
                runs = list(entry.runs)
                entry.error = error
                entry.backlog = None
                core.activated.notify_all()
            for run_id in runs:
                core.settle_error(run_id, error)
            return None
        undelivered = []
        with core.lock:
            entry.ref = ref
            backlog, entry.backlog = entry.backlog or [], None
            core.counters.activations += 1
            core.activated.notify_all()
            # Under the lock, so that no run routed from now on overtakes the queued ones (and
            # settled after it: settling takes the lock).
            for run_id, message in backlog:
                try:
                    ref.tell(message)
                except pykka.ActorDeadError:
                    undelivered.append(run_id)
        for run_id in undelivered:
            self._undelivered(run_id)
        return ref

    def _start_session(self, session_id: str, entry: _Entry) -> pykka.ActorRef[Any]:
        """Start a session actor and name it in the registry (the child spec's ``start``).

        Runs on the sessions supervisor's thread. The routing table is the authority: an
        activation its caller gave up on (it timed out) starts nothing, and an actor left
        registered by such an activation is stopped before the new one takes the name.
        """
        if self._core.live.get(session_id) is not entry:
            raise PraxoError("SESSION_START_FAILED", "the activation was abandoned")
        stale = self.registry.lookup(session_id)
        if stale is not None:
            logger.warning("stale_session_stopped", session_id=session_id)
            with contextlib.suppress(pykka.ActorDeadError, pykka.Timeout):
                stale.stop(timeout=self._timeout)
        ref = SessionActor.start(self._core, session_id, actor_scheduler=self._scheduler)
        return self.registry.register(session_id, ref)

    def _ref(self, session_id: str, timeout: float) -> pykka.ActorRef[Any] | None:
        """Return a live session's actor, waiting for its activation; None if there is none."""
        entry = self._core.live.get(session_id)
        if entry is None:
            return None
        if entry.ref is None:
            with self._core.lock:
                self._core.activated.wait_for(lambda: not entry.activating, timeout)
        return entry.ref

    def _cancel(self, future: RunFuture) -> bool:
        ref = self._ref(future.session_id, self._timeout)
        if ref is None or future.done():
            return False
        try:
            ref.tell(encode(CancelRun(future.run_id)))
        except pykka.ActorDeadError:
            return False
        return True

    def _history(self, session_id: str, timeout: float) -> list[Message]:
        ref = self._ref(session_id, timeout)
        try:
            if ref is not None:
                with contextlib.suppress(pykka.ActorDeadError):
                    reply = decode(ref.ask(encode(GetHistory()), block=True, timeout=timeout))
                    if isinstance(reply, History):
                        return reply.messages
            document: str | None = self._core.store_ref.ask(
                encode(LoadCheckpoint(session_id)), block=True, timeout=timeout
            )
        except pykka.ActorDeadError:
            raise PraxoError("RUNTIME_STOPPED", "the runtime has stopped") from None
        except pykka.Timeout:
            raise PraxoError("RUNTIME_TIMEOUT", f"no history within {timeout} s") from None
        if document is None:
            return []
        session = load_checkpoint(
            document.encode(), allowed_types=self._core.allowed_types, key=self._core.key
        )
        return session.messages

    def _stop_session(self, session_id: str, timeout: float) -> bool:
        ref = self._ref(session_id, timeout)
        if ref is None:
            return False
        with self._core.lock:
            self._core.user_stops.add(session_id)
        try:
            return bool(ref.stop(timeout=timeout))
        except pykka.Timeout:
            raise PraxoError(
                "RUNTIME_TIMEOUT", f"session did not stop within {timeout} s"
            ) from None
        finally:
            with self._core.lock:
                self._core.user_stops.discard(session_id)

    def _passivate(self, session_id: str, timeout: float) -> bool:
        ref = self._ref(session_id, timeout)
        if ref is None:
            return False
        try:
            done = bool(ref.ask(encode(Passivate(0)), timeout=timeout))
        except pykka.ActorDeadError:
            return False
        if done:
            ref.actor_stopped.wait(timeout)
        return done

    # -- passivation of idle sessions (on the runtime's event loop) ------------------------

    def _schedule_janitor(self) -> None:
        assert self._idle_timeout is not None
        interval = max(min(self._idle_timeout / 2, 30.0), 0.05)
        self._janitor = self._loop.call_later(interval, self._janitor_tick)

    def _janitor_tick(self) -> None:
        assert self._idle_timeout is not None
        message = encode(Passivate(int(self._idle_timeout * 1e9)))
        for ref in self._core.idle_sessions(self._idle_timeout):
            with contextlib.suppress(pykka.ActorDeadError):
                ref.tell(message)
        self._schedule_janitor()

    # -- statistics and shutdown -----------------------------------------------------------

    def statistics(self) -> RuntimeStatistics:
        """Return a snapshot of the runtime's counters (the session and run counts agree)."""
        subs = [s.statistics() for s in self._router.subscriptions]
        core = self._core
        with core.lock:
            c = replace(core.counters)
            live, pending = len(core.live), len(core.pending)
        return RuntimeStatistics(
            live_sessions=live,
            runs_started=c.runs_started,
            runs_completed=c.runs_completed,
            runs_failed=c.runs_failed,
            runs_pending=pending,
            activations=c.activations,
            passivations=c.passivations,
            crashes=c.crashes,
            events_emitted=c.events,
            events_delivered=sum(s.delivered for s in subs),
            events_dropped=sum(s.dropped for s in subs),
            subscriptions=len(subs),
        )

    def stop(self) -> None:
        """Stop the tree in reverse order (sessions, store, bus) and every runtime thread.

        Runs still pending fail with ``RUNTIME_STOPPED``. Idempotent.
        """
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        with self._core.lock:
            self._core.stopping = True
        try:
            self.root.stop(timeout=self._timeout * 4)
        except pykka.ActorDeadError:
            pass  # the tree is already down (escalated past its restart budget)
        except pykka.Timeout:
            # Children past their shutdown time are abandoned by their supervisors; the root
            # itself did not answer in time. Release everything else regardless.
            logger.error("runtime_stop_timeout", timeout=self._timeout * 4)
        finally:
            for run_id in list(self._core.pending):
                self._core.settle_error(
                    run_id, AgentError("RUNTIME_STOPPED", "the runtime stopped", run_id)
                )
            self._release_threads()
            self._close_store()
        logger.info("runtime_stopped")

    def _close_store(self) -> None:
        close = getattr(self.store, "close", None)
        if self._owns_store and callable(close):
            try:
                close()
            except Exception as exc:  # stopping goes on: the threads are already released
                logger.error("store_close_failed", error=repr(exc))

    def _release_threads(self) -> None:
        self._router.close(timeout=self._timeout)
        for name in self._activator.shutdown(self._timeout):
            logger.error("activator_thread_abandoned", thread=name)
        for name in self._io_pool.shutdown(self._timeout):
            logger.error("io_thread_abandoned", thread=name)
        self._scheduler.shutdown(timeout=self._timeout)

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self._loop.is_running():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(cancel_all(), self._loop).result(self._timeout)
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop_thread.join(self._timeout)
        if not self._loop_thread.is_alive():
            self._loop.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.stop)


def _activation_error(exc: BaseException) -> PraxoError:
    if isinstance(exc, SupervisorError) and exc.code == "SUPERVISOR_MAX_CHILDREN":
        return PraxoError("RUNTIME_SESSION_LIMIT", str(exc))
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, PraxoError):
        return PraxoError(cause.code, str(cause))
    if isinstance(exc, PraxoError):
        return exc
    return PraxoError("SESSION_START_FAILED", f"{type(exc).__name__}: {exc}")


def _check_config(
    max_live_sessions: int,
    max_queue: int,
    on_busy: str,
    idle_timeout: float | None,
    io_threads: int,
    timeout: float,
    scheduler_threads: int = 1,
    delivery_threads: int = 1,
) -> None:
    def bad(message: str) -> PraxoError:
        return PraxoError("RUNTIME_INVALID_CONFIG", message)

    for name, value in (
        ("max_live_sessions", max_live_sessions),
        ("io_threads", io_threads),
        ("scheduler_threads", scheduler_threads),
        ("delivery_threads", delivery_threads),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad(f"{name} must be an int >= 1")
    if isinstance(max_queue, bool) or not isinstance(max_queue, int) or max_queue < 0:
        raise bad("max_queue must be an int >= 0")
    if on_busy not in ("enqueue", "reject"):
        raise bad("on_busy must be 'enqueue' or 'reject'")
    if idle_timeout is not None and not (
        isinstance(idle_timeout, int | float) and idle_timeout > 0
    ):
        raise bad("idle_timeout must be a positive number or None")
    if not (isinstance(timeout, int | float) and timeout > 0):
        raise bad("timeout must be a positive number")


class _SessionStart:
    """A session's child-spec ``start``: a slotted callable, since the sessions supervisor keeps
    one for each live session (a partial or a closure costs ~200 bytes more)."""

    __slots__ = ("entry", "runtime", "session_id")

    def __init__(self, runtime: Runtime, session_id: str, entry: _Entry) -> None:
        self.runtime = runtime
        self.session_id = session_id
        self.entry = entry

    def __call__(self) -> pykka.ActorRef[Any]:
        return self.runtime._start_session(self.session_id, self.entry)


def _ignore(ok: bool, value: Any) -> None:
    """Take the activator's outcome: ``_activate`` settles every run itself, so only report."""
    if not ok:
        logger.error("activation_failed", error=repr(value))
