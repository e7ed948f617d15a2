"""A kernel driven by hand: no thread, no actor, time on a ManualClock.

The test's thread is the kernel's loop thread, so the loop gate runs each post at once and
the debug checks of the kernel's ownership hold. The store actor, the sessions supervisor and
the session actors are fakes that record what they are told; the test answers for them (a
store read, a batch of started sessions) and :meth:`Rig.turn` runs one turn of the loop (the
activator sends what was queued in a turn at its end).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any

import pykka

from praxo_actors.actors import MNFuture
from praxo_actors.memory._log import StoredSession
from praxo_actors.models import RunResult, session
from praxo_actors.runtime._kernel._agents import Agents
from praxo_actors.runtime._kernel._clock import LoopClock
from praxo_actors.runtime._kernel._kernel import Kernel
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._kernel._statistics import RuntimeStatistics
from praxo_actors.runtime._protocol import LoadSessions, Sessions, decode, encode
from praxo_actors.testing import ManualClock
from supervisors import SupervisorError

__all__ = ["FakeActor", "FakeSupervisor", "Rig", "result"]

TIMEOUT = 10.0


class FakeActor(pykka.ActorRef[Any]):
    """An actor's ref that records what it is told and asked (decoded), and its stop (no
    actor behind it)."""

    def __init__(self, name: str) -> None:  # no super().__init__(): there is no actor
        self.name = name
        self.told: list[Any] = []
        self.asked: list[tuple[Any, MNFuture[Any]]] = []
        self.alive = True

    def __repr__(self) -> str:
        return f"<FakeActor {self.name}>"

    def __str__(self) -> str:
        return self.name

    def tell(self, message: bytes) -> None:
        if not self.alive:
            raise pykka.ActorDeadError(f"{self.name} is dead")
        self.told.append(decode(message))

    def ask(self, message: bytes, block: bool = True) -> MNFuture[Any]:
        if not self.alive:
            raise pykka.ActorDeadError(f"{self.name} is dead")
        reply: MNFuture[Any] = MNFuture()
        self.asked.append((decode(message), reply))
        return reply

    def stop(self, block: bool = True, timeout: float | None = None) -> None:
        self.alive = False

    def is_alive(self) -> bool:
        return self.alive

    def kinds(self) -> list[str]:
        """The type names of the messages told, in order."""
        return [type(message).__name__ for message in self.told]


class FakeSupervisor:
    """The sessions supervisor's proxy: records each ``start_children`` batch."""

    def __init__(self) -> None:
        self.batches: list[tuple[list[str], Callable[[list[Any]], None]]] = []

    def start_children(self, specs: list[Any], started: Callable[[list[Any]], None]) -> None:
        self.batches.append(([spec.id for spec in specs], started))


class FakeRegistry:
    """The session registry: records the sessions unregistered (passivated)."""

    def __init__(self) -> None:
        self.unregistered: list[str] = []

    def unregister(self, session_id: str) -> None:
        self.unregistered.append(session_id)

    def lookup(self, session_id: str) -> None:
        return None


class FakeBus:
    """The event router, as far as the kernel reads it."""

    subscription_count = 0

    def statistics(self) -> Any:
        return _BusStatistics()


@dataclass(frozen=True)
class _BusStatistics:
    delivered: int = 0
    dropped: int = 0
    subscriptions: int = 0


class _Scheduler:
    """The loop's actor scheduler: nothing runs on it here."""

    def run_now(self) -> None:
        pass

    def run_after(self, post: Callable[..., bool], fn: Callable[..., Any], *args: Any) -> bool:
        return post(fn, *args)


async def _no_interrupted_run(kernel: Kernel, session_id: str) -> str | None:
    return None


def result(run_id: str, session_id: str = "s", output: str = "ok", **kw: Any) -> RunResult:
    """Return a completed run's result."""
    return RunResult(run_id=run_id, session=session(session_id), output=output, **kw)


@dataclass
class Rig:
    """A kernel on this thread's (not running) event loop, with fakes for its children."""

    loop: asyncio.AbstractEventLoop
    clock: ManualClock
    kernel: Kernel
    store: FakeActor
    supervisor: FakeSupervisor
    registry: FakeRegistry
    sessions: dict[str, FakeActor] = field(default_factory=dict)
    _ids: Iterator[int] = field(default_factory=lambda: iter(range(1, 1_000_000)))

    @classmethod
    def build(
        cls,
        *,
        max_live_sessions: int = 100,
        max_queue: int = 100,
        on_busy: str = "queue",
        timeout: float = TIMEOUT,
        durable: tuple[str, ...] = (),
        lookup: Callable[[Kernel, str], Coroutine[Any, Any, str | None]] = _no_interrupted_run,
    ) -> Rig:
        """Build the kernel as the runtime does, with its children started (fakes)."""
        loop = asyncio.new_event_loop()
        thread_id = threading.get_ident()
        clock = ManualClock()
        agents = Agents()
        registry = FakeRegistry()
        kernel = Kernel(
            loop=loop,
            loop_thread_id=thread_id,
            store=None,
            agents=agents,
            bus=FakeBus(),  # type: ignore[arg-type]
            registry=registry,
            io_pool=None,  # type: ignore[arg-type]
            loop_scheduler=_Scheduler(),  # type: ignore[arg-type]
            session_scheduler=None,
            clock=LoopClock(loop, thread_id, clock),
            lookup=lookup,
            key=None,
            allowed_types=frozenset(),
            max_live_sessions=max_live_sessions,
            max_queue=max_queue,
            on_busy=on_busy,
            timeout=timeout,
        )
        for name in ("echo", *durable):
            agents.register(name, lambda: None, durable=name in durable)  # type: ignore[arg-type,return-value]
        store, supervisor = FakeActor("store"), FakeSupervisor()
        kernel.child_started("store", store)  # type: ignore[arg-type]
        kernel.child_started("events", FakeActor("events"))  # type: ignore[arg-type]
        kernel.child_started("sessions", FakeActor("sessions"), supervisor)  # type: ignore[arg-type]
        return cls(loop, clock, kernel, store, supervisor, registry)

    def close(self) -> None:
        """Stop the kernel as a stopping runtime does, and close the loop."""
        self.kernel.close()
        self.turn()
        self.loop.close()

    # -- driving ------------------------------------------------------------------------------

    def turn(self) -> None:
        """Run the loop's ready callbacks (one turn, and the callbacks that turn made ready)."""
        for _ in range(3):
            self.loop.run_until_complete(asyncio.sleep(0))

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coro`` on the loop (for what must be called from a running loop)."""
        return self.loop.run_until_complete(coro)

    def submit(
        self,
        session_id: str,
        agent: str = "echo",
        input: str = "hi",
        deadline_ns: int | None = None,
        run_id: str | None = None,
        resume: str | None = None,
    ) -> RunFuture:
        """Submit a run as a handle does; return its future."""
        run_id = run_id or f"r{next(self._ids)}"
        future = RunFuture(run_id, session_id, self.kernel.request_cancel)
        self.kernel.submit(future, agent, input, deadline_ns, resume)
        return future

    def read(self, states: dict[str, StoredSession] | None = None) -> list[str]:
        """Answer the store's oldest unanswered read of sessions; return the ids it read."""
        message, reply = self._oldest_read()
        ids = message.session_ids
        reply.set(encode(Sessions([(states or {}).get(sid) for sid in ids])))
        return list(ids)

    def fail_read(self, error: BaseException) -> None:
        """Fail the store's oldest unanswered read of sessions."""
        _, reply = self._oldest_read()
        try:
            raise error
        except BaseException:
            reply.set_exception()

    def _oldest_read(self) -> tuple[LoadSessions, MNFuture[Any]]:
        for message, reply in self.store.asked:
            if isinstance(message, LoadSessions) and not reply.done():
                return message, reply
        raise AssertionError("no read of sessions waits for an answer")

    def start(self, *errors: SupervisorError | None) -> list[str]:
        """Answer the supervisor's oldest batch: every session started (a FakeActor each),
        or the given error for the session at that place; return the batch's ids."""
        ids, started = self.supervisor.batches.pop(0)
        refs: list[Any] = []
        for i, session_id in enumerate(ids):
            error = errors[i] if i < len(errors) else None
            if error is not None:
                refs.append(error)
            else:
                actor = self.sessions[session_id] = FakeActor(session_id)
                refs.append(actor)
        started(refs)
        return ids

    def activate(self, states: dict[str, StoredSession] | None = None) -> list[str]:
        """Run the turn that sends the queued activations, then answer both halves."""
        self.turn()
        self.read(states)
        return self.start()

    def statistics(self) -> RuntimeStatistics:
        """Return the kernel's counters."""
        return self.kernel.statistics()
