"""Runtime failures: bad settings, a failing store, a restarted tree, dropped streams."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable
from typing import Any

import pykka
import pytest
from _runtime_helpers import TIMEOUT, Gate, echo_agent, error_code

from praxo_actors import PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.memory import InMemoryStore
from praxo_actors.runtime import Runtime
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]


class FailingStore(InMemoryStore):
    """An in-memory store whose writes fail while ``broken`` is set."""

    broken = False

    def apply(self, puts: Any, deletes: Any = ()) -> None:
        if self.broken:
            raise OSError("disk full")
        super().apply(puts, deletes)


def test_bad_checkpoint_settings_are_refused(runtime: Start) -> None:
    """A non-bytes key or an allowlist without sessions is RUNTIME_INVALID_CONFIG."""
    bad: list[dict[str, Any]] = [
        {"checkpoint_key": "secret"},
        {"checkpoint_key": b""},
        {"allowed_types": ["session"]},
        {"allowed_types": frozenset({"message"})},
        {"allowed_types": frozenset({"session", 3})},
    ]
    for kwargs in bad:
        with pytest.raises(PraxoError) as info:
            runtime(**kwargs)
        assert info.value.code == "RUNTIME_INVALID_CONFIG", kwargs


def test_a_signed_runtime_restores_its_sessions(runtime: Start) -> None:
    """With a checkpoint key, a passivated session is restored from its signed checkpoint."""
    rt = runtime(agents={"default": echo_agent}, checkpoint_key=b"k" * 32)
    handle = rt.session("s")
    handle.run("one").get(timeout=TIMEOUT)
    assert handle.passivate()
    assert handle.run("two").get(timeout=TIMEOUT).output == "two"
    assert len(handle.history()) == 4


def test_an_agent_with_its_own_sink_is_refused(runtime: Start) -> None:
    """Hosted runs publish through the event bus, so an agent's own sink is a config error."""
    rt = runtime(agents={"sinky": lambda: new_agent_options(echo_agent().model, sink=print)})
    assert error_code(rt.session("s", agent="sinky").run("hi")) == "RUNTIME_INVALID_CONFIG"


def test_a_failing_store_fails_the_run_and_the_runtime_keeps_serving(runtime: Start) -> None:
    """A checkpoint write that raises fails its run with STORE_FAILED; later runs succeed."""
    store = FailingStore()
    rt = runtime(agents={"default": echo_agent}, store=store)
    store.broken = True
    assert error_code(rt.session("s").run("lost")) == "STORE_FAILED"
    store.broken = False
    assert rt.session("t").run("kept").get(timeout=TIMEOUT).output == "kept"


def test_runs_in_flight_when_the_store_crashes_end_with_a_code(runtime: Start) -> None:
    """A store crash restarts the sessions after it; their runs fail with SESSION_CRASHED."""
    gate = Gate()
    rt = runtime(agents={"gated": lambda: new_agent_options(gate)})
    futures = [rt.session(f"s{i}", agent="gated").run("x") for i in range(3)]
    gate.entered(3)
    rt._store_ref.tell(b"not a message")  # the store actor fails on a tell: a crash
    codes = [error_code(f) for f in futures]
    gate.release()
    assert codes == ["SESSION_CRASHED"] * 3
    # rest_for_one: the store restarts, then the sessions supervisor after it.
    eventually(lambda: rt._store_ref.is_alive() and rt._sessions_ref.is_alive())
    assert rt.session("after", agent="gated").run("y").get(timeout=TIMEOUT).output == "y!"


def test_a_dropped_stream_unsubscribes(runtime: Start) -> None:
    """A stream that is never closed is collected, and its subscription goes with it."""
    rt = runtime(agents={"default": echo_agent})

    async def main() -> None:
        stream = rt.events.stream(pattern="*")
        assert len(rt.events.subscriptions) == 1
        del stream
        gc.collect()

    asyncio.run(main())
    assert rt.events.subscriptions == ()


def test_runs_build_events_only_while_someone_subscribes(runtime: Start) -> None:
    """A run with no subscription emits nothing; once subscribed, runs emit all their events."""
    rt = runtime(agents={"default": echo_agent})
    rt.session("s").run("quiet").get(timeout=TIMEOUT)
    assert rt.statistics().events_emitted == 0
    seen: list[str] = []
    sub = rt.events.subscribe(lambda e: seen.append(e.type), pattern="*")
    rt.session("s").run("heard").get(timeout=TIMEOUT)
    # The run's future completes once its checkpoint is stored, which may precede delivery.
    eventually(lambda: "run.completed" in seen)
    assert seen[0] == "run.started" and seen[-1] == "run.completed"
    assert sub.statistics().delivered == len(seen) == rt.statistics().events_emitted


class _Stray(pykka.ThreadingActor):
    """An actor left registered under a session's name by an abandoned activation."""


def test_a_stale_registration_is_stopped_when_its_session_activates(runtime: Start) -> None:
    """An actor registered under a session id the routing table does not know is replaced."""
    rt = runtime(agents={"default": echo_agent})
    stray = _Stray.start()
    rt.registry.register("s", stray)
    assert rt.session("s").run("hi").get(timeout=TIMEOUT).output == "hi"
    assert not stray.is_alive()
    assert rt.registry.lookup("s") is not stray


class _SlowRestoreStore(InMemoryStore):
    """A store whose reads wait until ``gate`` is set, holding a session's activation."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def get(self, namespace: Any, key: str) -> Any:
        self.gate.wait(TIMEOUT)
        return super().get(namespace, key)


class _FailingRestoreStore(_SlowRestoreStore):
    """A store whose reads fail once ``gate`` is set (a database gone while restoring)."""

    def get(self, namespace: Any, key: str) -> Any:
        self.gate.wait(TIMEOUT)
        raise OSError("the database is gone")

    def get_many(self, namespace: Any, keys: Any) -> Any:
        self.gate.wait(TIMEOUT)
        raise OSError("the database is gone")


def test_a_wait_for_a_session_whose_activation_failed_ends_at_once(runtime: Start) -> None:
    """A caller waiting for a session to be live (``passivate``) hears that it is not when its
    activation fails, instead of waiting out its timeout."""
    store = _FailingRestoreStore()
    rt = runtime(agents={"default": echo_agent}, store=store)
    handle = rt.session("s")
    run = handle.run("one")
    outcome: list[object] = []
    waiter = threading.Thread(target=lambda: outcome.append(handle.passivate(timeout=TIMEOUT)))
    waiter.start()
    kernel = rt._kernel
    eventually(lambda: kernel.call(lambda: len(kernel.table.waiters), timeout=TIMEOUT) == 1)
    store.gate.set()
    assert error_code(run) == "STORE_FAILED"
    waiter.join(TIMEOUT)
    assert not waiter.is_alive()
    assert outcome == [False]  # not RUNTIME_TIMEOUT: the session is not live, nothing to stop


def test_run_returns_while_the_session_is_still_activating(runtime: Start) -> None:
    """``run()`` never waits on activation; runs routed meanwhile are sent in order after it."""
    store = _SlowRestoreStore()
    rt = runtime(agents={"default": echo_agent}, store=store)
    handle = rt.session("s")
    first, second = handle.run("one"), handle.run("two")
    assert not first.done() and not second.done()
    store.gate.set()
    assert first.get(timeout=TIMEOUT).output == "one"
    assert second.get(timeout=TIMEOUT).output == "two"
    assert [m.content for m in handle.history()] == ["one", "one", "two", "two"]
