"""Actors, start callables and waits shared by the supervision tests."""

from __future__ import annotations

import collections
import contextlib
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import pykka
from pykka.messages import ProxyGetAttr

from supervisors import ChildSpec, CrashOnAskError, Down, monitor
from supervisors import _pykka_compat as compat

TIMEOUT = 5.0


class Crash(Exception):
    """The exception a test worker crashes with."""


class StartFailure(Exception):
    """The exception a failing start raises."""


class Trace:
    """A thread-safe list of lifecycle events, e.g. ``("stop", "a")``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple[str, str]] = []

    def add(self, kind: str, name: str) -> None:
        with self._lock:
            self._items.append((kind, name))

    def of(self, kind: str) -> list[str]:
        with self._lock:
            return [name for k, name in self._items if k == kind]

    def events(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self._items)


class Worker(pykka.ThreadingActor):
    """A worker that crashes, fails or blocks on request, and traces its lifecycle."""

    def __init__(
        self,
        name: str = "worker",
        trace: Trace | None = None,
        fail_on_start: bool = False,
        fail_on_stop: bool = False,
        fail_on_failure: bool = False,
    ) -> None:
        super().__init__()
        self.name = name
        self.trace = trace if trace is not None else Trace()
        self.fail_on_start = fail_on_start
        self.fail_on_stop = fail_on_stop
        self.fail_on_failure = fail_on_failure

    def on_start(self) -> None:
        self.trace.add("start", self.name)
        if self.fail_on_start:
            raise StartFailure(f"{self.name} failed in on_start")

    def on_stop(self) -> None:
        self.trace.add("stop", self.name)
        if self.fail_on_stop:
            raise Crash(f"{self.name} failed in on_stop")

    def on_failure(self, *_exc_info: object) -> None:
        self.trace.add("failure", self.name)
        if self.fail_on_failure:
            raise Crash(f"{self.name} failed in on_failure")

    def on_receive(self, message: Any) -> Any:
        if message == "ping":
            return "pong"
        if message == "crash":
            raise Crash(f"{self.name} crashed")
        if isinstance(message, tuple) and message[0] == "block":
            message[1].set()  # tell the test the worker is now stuck
            message[2].wait(timeout=30)  # bounded: released by the test
            return None
        return None

    def fail(self) -> None:
        raise ValueError(f"{self.name} refused")


class AskCrashWorker(CrashOnAskError, Worker):
    """A worker for which an exception in an ask handler is also a crash."""


class Starter:
    """A child's start callable: counts starts, keeps the refs, fails when told to."""

    def __init__(self, name: str, trace: Trace | None = None, actor: type[Worker] = Worker) -> None:
        self.name = name
        self.trace = trace if trace is not None else Trace()
        self.actor = actor
        self.refs: list[pykka.ActorRef[Any]] = []
        self.fail: str | None = None  # None, "raise" or "on_start"
        self.plan: list[str | None] = []  # per coming attempt; overrides fail while not empty
        self.attempts = 0
        self.succeeded = threading.Event()

    def __call__(self) -> pykka.ActorRef[Any]:
        self.attempts += 1
        fail = self.plan.pop(0) if self.plan else self.fail
        if fail == "raise":
            raise StartFailure(f"{self.name} cannot start")
        ref = self.actor.start(self.name, self.trace, fail_on_start=fail == "on_start")
        self.refs.append(ref)
        if fail is None:
            self.succeeded.set()
        return ref

    def spec(self, **fields: Any) -> ChildSpec:
        return ChildSpec(self.name, self, **fields)

    @property
    def current(self) -> pykka.ActorRef[Any]:
        return self.refs[-1]


class DownWaiter:
    """Monitor an actor and wait, bounded, for its ``Down``."""

    def __init__(self, ref: pykka.ActorRef[Any]) -> None:
        self._event = threading.Event()
        self.downs: list[Down] = []
        self.monitor = monitor(ref, self._on_down)

    def _on_down(self, down: Down) -> None:
        self.downs.append(down)
        self._event.set()

    def wait(self, timeout: float = TIMEOUT) -> Down:
        assert self._event.wait(timeout), "no Down within the timeout"
        return self.downs[0]


def crash(ref: pykka.ActorRef[Any]) -> Down:
    """Crash ``ref`` through a tell and return its ``Down`` once it has stopped."""
    waiter = DownWaiter(ref)
    ref.tell("crash")
    return waiter.wait()


def crash_child(sup: pykka.ActorRef[Any], ref: pykka.ActorRef[Any]) -> Down:
    """Crash a supervisor's child and return once the supervisor has handled its exit."""
    down = crash(ref)
    if sup.is_alive():
        # Queued behind the child's exit, so answered after the supervisor reacted to it.
        with contextlib.suppress(pykka.ActorDeadError):
            sup.ask(ProxyGetAttr(attr_path=("actor_urn",)), timeout=TIMEOUT)
    return down


def stop(ref: pykka.ActorRef[Any]) -> None:
    """Stop ``ref`` normally; its monitors have run when this returns."""
    assert ref.stop(timeout=TIMEOUT) is True


def call(ref: pykka.ActorRef[Any], method: str, *args: Any) -> Any:
    """Call a supervisor API method and wait, bounded, for its answer."""
    return getattr(ref.proxy(), method)(*args).get(timeout=TIMEOUT)


def ids(ref: pykka.ActorRef[Any]) -> list[str]:
    """Return a supervisor's child ids, in order."""
    return [record.id for record in call(ref, "which_children")]


def child_ref(sup: pykka.ActorRef[Any], child_id: str) -> pykka.ActorRef[Any] | None:
    """Return the ref of one child of a supervisor."""
    for record in call(sup, "which_children"):
        if record.id == child_id:
            return record.ref  # type: ignore[no-any-return]
    raise AssertionError(f"no child {child_id!r}")


def capture(log: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    """Return the captured log events (see ``_helpers.log_events``) of one event."""
    return [entry for entry in log if entry["event"] == event]


# -- an actor kind with its own loop ------------------------------------------------------


class _SharedInbox:
    """An inbox that schedules its actor on the shared pool when a message arrives."""

    def __init__(self) -> None:
        self._queue: collections.deque[Any] = collections.deque()
        self.on_put: Callable[[], None] = lambda: None

    def put(self, envelope: Any, /) -> None:
        self._queue.append(envelope)
        self.on_put()

    def get(self) -> Any:
        return self._queue.popleft()

    def empty(self) -> bool:
        return not self._queue


def _start_shared(actor: SharedLoopActor) -> None:
    actor.begin()


@compat.actor_hooks(inbox=_SharedInbox, future=pykka.ThreadingFuture, start=_start_shared)
class SharedLoopActor(pykka.Actor):
    """A Pykka actor kind whose loop runs on a pool shared by many actors (no own thread).

    It keeps Pykka's lifecycle contract (``on_start``, ``on_stop``, ``on_failure``, both exits,
    ``actor_stopped``) but not ThreadingActor's loop.
    """

    pool: ClassVar[ThreadPoolExecutor | None] = None

    def begin(self) -> None:
        assert SharedLoopActor.pool is not None, "use the shared_pool fixture"
        self._schedule_lock = threading.Lock()
        self._scheduled = True
        inbox: Any = self.actor_inbox
        inbox.on_put = self._on_put
        SharedLoopActor.pool.submit(self._run, True)

    def _on_put(self) -> None:
        with self._schedule_lock:
            if self._scheduled:
                return
            self._scheduled = True
        assert SharedLoopActor.pool is not None
        SharedLoopActor.pool.submit(self._run, False)

    def _run(self, starting: bool) -> None:
        if starting:
            compat.loop_setup(self)
        while True:
            if self.actor_stopped.is_set():
                compat.loop_teardown(self)
                return
            with self._schedule_lock:
                if self.actor_inbox.empty():
                    self._scheduled = False
                    return
            self._process(self.actor_inbox.get())

    def _process(self, envelope: Any) -> None:
        try:
            response = compat.receive(self, envelope.message)
            if envelope.reply_to is not None:
                envelope.reply_to.set(response)
        except Exception:
            if envelope.reply_to is not None:
                envelope.reply_to.set_exception()
            else:
                compat.report_failure(self, *sys.exc_info())
                try:
                    self.on_failure(*sys.exc_info())
                except Exception:
                    compat.report_failure(self, *sys.exc_info())

    def on_receive(self, message: Any) -> Any:
        if message == "ping":
            return "pong"
        if message == "crash":
            raise Crash("shared-loop actor crashed")
        return None
