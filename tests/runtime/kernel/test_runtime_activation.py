"""The activation timeout bounds a stuck activation, never a backlog that keeps moving."""

from __future__ import annotations

import asyncio
import threading
import traceback
import types
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from _helpers import assert_no_new_threads
from _runtime_helpers import TIMEOUT, echo_agent

from praxo_actors import PraxoError
from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._log import PENDING
from praxo_actors.runtime import RunFuture, Runtime
from praxo_actors.runtime._kernel import _activation
from praxo_actors.testing import ManualClock
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]

# The runtime's activation timeout in these tests: seconds of the manual clock, never waited.
ACTIVATION = 10.0


class _StuckStore(InMemoryStore):
    """An in-memory store whose session-log reads never return until the test releases them
    (failing after ``hold`` seconds, not to hang a broken test)."""

    def __init__(self, hold: float = TIMEOUT) -> None:
        super().__init__()
        self.hold = hold
        self.entered = threading.Event()
        self.released = threading.Event()

    def get_many(self, namespace: Sequence[str], keys: Sequence[str]) -> Any:
        if tuple(namespace) == PENDING:  # read once per batch of sessions restored
            self.entered.set()
            if not self.released.wait(self.hold):
                raise TimeoutError("the store was never released")
        return super().get_many(namespace, keys)


class _SlowStore(InMemoryStore):
    """An in-memory store each of whose session-log reads takes ``seconds`` of ``clock``, the
    first once ``go`` is set."""

    def __init__(self, clock: ManualClock, seconds: float) -> None:
        super().__init__()
        self.clock = clock
        self.seconds = seconds
        self.go = threading.Event()
        self.reads = 0

    def get_many(self, namespace: Sequence[str], keys: Sequence[str]) -> Any:
        if tuple(namespace) == PENDING:
            if not self.go.wait(TIMEOUT):
                raise TimeoutError("the store was never let go")
            self.reads += 1
            self.clock.advance(self.seconds)  # the read "takes" that long, by the clock
        return super().get_many(namespace, keys)


class _FailingStore(InMemoryStore):
    """An in-memory store whose session-log reads fail."""

    def get_many(self, namespace: Sequence[str], keys: Sequence[str]) -> Any:
        if tuple(namespace) == PENDING:
            raise RuntimeError("the disk is on fire")
        return super().get_many(namespace, keys)


async def _all_started(rt: Runtime) -> int:
    """Return how many sessions the sessions supervisor runs once it has answered every
    start sent so far (its mailbox is in order), and the loop has heard the answers."""
    sessions = rt._sessions_ref.proxy()  # type: ignore[union-attr]

    def started() -> int:
        rt.statistics()  # a loop round trip: the activations queued before it are sent
        return int(sessions.count_children().get(timeout=TIMEOUT).active)

    return await asyncio.to_thread(started)


async def _error(future: RunFuture) -> PraxoError:
    with pytest.raises(PraxoError) as info:
        await future
    return info.value


def _errors(futures: list[RunFuture]) -> list[PraxoError]:
    errors = []
    for future in futures:
        with pytest.raises(PraxoError) as info:
            future.get(timeout=TIMEOUT)
        errors.append(info.value)
    return errors


def _assert_own_errors(errors: list[PraxoError], code: str) -> None:
    """Every future failed with ``code``, its own object, with a traceback of a few frames."""
    assert {e.code for e in errors} == {code}
    assert len({id(e) for e in errors}) == len(errors)
    depths = {len(traceback.extract_tb(e.__traceback__)) for e in errors}
    assert len(depths) == 1 and max(depths) < 10, depths


def test_a_stuck_store_read_fails_its_sessions_at_the_timeout() -> None:
    """Sessions whose checkpoint read never returns fail RUNTIME_TIMEOUT once the store has
    answered nothing for the timeout, each run with its own error; then the runtime recovers."""
    before = set(threading.enumerate())
    clock = ManualClock()
    store = _StuckStore()
    n = _activation.CHUNK + 100  # two batches: one stuck in the store, one queued behind it

    async def main() -> None:
        async with Runtime.open(store, clock=clock, timeout=ACTIVATION, idle_timeout=None) as rt:
            rt.register_agent("default", echo_agent)
            try:
                # Submitted from the loop itself: one turn, so both batches go at the clock's 0.
                futures = [rt.session(f"s{i}").run("x") for i in range(n)]
                assert await _all_started(rt) == n
                assert await asyncio.to_thread(store.entered.wait, TIMEOUT)
                clock.advance(ACTIVATION - 0.001)
                assert rt.statistics().runs_pending == n
                assert not any(f.done() for f in futures)
                clock.advance(0.001)
                assert all(f.done() for f in futures)  # the advance returns with them failed
                errors = [await _error(f) for f in futures]
                _assert_own_errors(errors, "RUNTIME_TIMEOUT")
                assert "the store answered nothing for 10.0 s" in str(errors[-1])
                stats = rt.statistics()
                assert stats.runs_failed == n and stats.live_sessions == 0
                assert stats.activations == 0
            finally:
                store.released.set()
            assert (await rt.session("after").arun("y")).output == "y"

    asyncio.run(main())
    assert_no_new_threads(before, TIMEOUT)


def test_a_backlog_behind_a_slow_store_all_activates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight batches queued behind a store that takes 0.8 of the timeout per read all
    activate, though the backlog as a whole takes more than six timeouts."""
    monkeypatch.setattr(_activation, "CHUNK", 5)
    before = set(threading.enumerate())
    clock = ManualClock()
    store = _SlowStore(clock, 0.8 * ACTIVATION)

    async def main() -> None:
        async with Runtime.open(store, clock=clock, timeout=ACTIVATION, idle_timeout=None) as rt:
            rt.register_agent("default", echo_agent)
            try:
                futures = [rt.session(f"s{i}").run(f"{i}") for i in range(40)]
                # Only the store is slow: the sessions supervisor starts every session first.
                assert await _all_started(rt) == 40
            finally:
                store.go.set()
            assert [(await f).output for f in futures] == [f"{i}" for i in range(40)]
            assert store.reads == 8
            assert clock.now() == 8 * 0.8 * ACTIVATION
            stats = rt.statistics()
            assert stats.activations == 40 and stats.runs_failed == 0

    asyncio.run(main())
    assert_no_new_threads(before, TIMEOUT)


def test_a_failing_store_read_gives_each_run_its_own_error(runtime: Start) -> None:
    """A batch whose read fails fails each of its runs with STORE_FAILED: its own object, with
    a traceback that does not grow with the number of runs."""
    rt = runtime(agents={"default": echo_agent}, store=_FailingStore())
    n = _activation.CHUNK + 100
    futures = [rt.session(f"s{i}").run("x") for i in range(n)]
    _assert_own_errors(_errors(futures), "STORE_FAILED")
    assert rt.statistics().live_sessions == 0


def test_several_runs_of_a_session_that_cannot_activate_each_get_their_own_error(
    runtime: Start,
) -> None:
    """Runs queued on one session whose activation fails each hold a distinct error object."""
    rt = runtime(agents={"default": echo_agent}, store=_FailingStore())
    handle = rt.session("s")
    _assert_own_errors(_errors([handle.run(f"{i}") for i in range(5)]), "STORE_FAILED")


def test_a_clock_without_timers_is_refused(runtime: Start) -> None:
    """clock= must have now(), monotonic_ns() and call_later(): else RUNTIME_INVALID_CONFIG."""
    for bad in (object(), lambda: 0.0):
        with pytest.raises(PraxoError) as info:
            runtime(clock=bad)
        assert info.value.code == "RUNTIME_INVALID_CONFIG"


def test_a_stopped_runtime_leaves_no_timer_on_its_clock(runtime: Start) -> None:
    """After stop() the clock fires nothing of the runtime's: no watchdog, janitor or deadline."""
    clock = ManualClock()
    rt = runtime(agents={"default": echo_agent}, clock=clock, idle_timeout=60)
    assert rt.session("s").run("x", deadline=30).get(timeout=TIMEOUT).output == "x"
    rt.stop()
    assert clock.advance(3600) == 0


class _HeldLoop:
    """A lane's clock in a unit test: a ManualClock whose timers can be held back, as a loop
    held up by a collector pause would run them late."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.held = False
        self.late: list[Callable[[], object]] = []

    def now(self) -> float:
        return self.clock.now()

    def call_later(self, delay: float, fn: Callable[..., object], *args: object) -> Any:
        def fire() -> None:
            if self.held:
                self.late.append(lambda: fn(*args))
            else:
                fn(*args)

        return self.clock.call_later(delay, fire)

    def release(self) -> None:
        self.held = False
        late, self.late = self.late, []
        for fn in late:
            fn()


def test_a_stall_of_the_loop_counts_for_two_ticks_only() -> None:
    """Time in which the watchdog itself could not run counts for at most two of its ticks."""
    clock = ManualClock()
    loop = _HeldLoop(clock)
    expired: list[list[Any]] = []
    activator: Any = types.SimpleNamespace(
        clock=loop, timeout=ACTIVATION, expire=lambda batches, _name: expired.append(batches)
    )
    lane = _activation._Lane(activator, "store", "documents")
    batch = _activation._Batch([], [])
    lane.sent(batch)
    loop.held = True
    clock.advance(30)  # the loop is held up for 30 s: no tick runs
    loop.release()  # the late tick counts 2 s of them (two ticks of 1 s)
    assert expired == []
    clock.advance(ACTIVATION - 2 - 0.001)
    assert expired == []
    clock.advance(0.001)
    assert expired == [[batch]]


def test_an_answer_restarts_the_count_for_the_batches_still_waiting() -> None:
    """Each answer of the store gives the batches still waiting a whole timeout again."""
    clock = ManualClock()
    expired: list[list[Any]] = []
    activator: Any = types.SimpleNamespace(
        clock=_HeldLoop(clock), timeout=ACTIVATION, expire=lambda b, _n: expired.append(b)
    )
    lane = _activation._Lane(activator, "store", "documents")
    first, second = _activation._Batch([], []), _activation._Batch([], [])
    lane.sent(first)
    lane.sent(second)
    clock.advance(ACTIVATION - 1)
    first.documents = []
    lane.answer()
    clock.advance(ACTIVATION - 0.001)
    assert expired == []
    clock.advance(0.001)
    assert expired == [[second]]


class _HeldStart:
    """Wraps a registry's ``register``: the session named ``session_id`` is registered (so its
    start reported) only once the test releases it."""

    def __init__(self, register: Callable[..., Any], session_id: str) -> None:
        self.register = register
        self.session_id = session_id
        self.entered = threading.Event()
        self.released = threading.Event()

    def __call__(self, name: Any, ref: Any) -> Any:
        if name == self.session_id:
            self.entered.set()
            if not self.released.wait(TIMEOUT):
                raise TimeoutError("the start was never released")
        return self.register(name, ref)


def test_a_session_started_after_its_activation_timed_out_leaves_no_actor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The store never answers and the session's start is reported only after its run failed
    RUNTIME_TIMEOUT: the late actor is stopped then (the store still silent), so the actors
    come back to what they were; the session activates again afterwards."""
    before = set(threading.enumerate())
    clock = ManualClock()
    store = _StuckStore(hold=3 * TIMEOUT)  # silent for longer than the test waits

    async def main() -> None:
        async with Runtime.open(store, clock=clock, timeout=ACTIVATION, idle_timeout=None) as rt:
            rt.register_agent("default", echo_agent)
            sessions = rt._sessions_ref.proxy()  # type: ignore[union-attr]

            def actors() -> int:
                """The session actors running (the sessions supervisor's children)."""
                return int(sessions.count_children().get(timeout=TIMEOUT).active)

            held = _HeldStart(rt.registry.register, "late")
            monkeypatch.setattr(rt.registry, "register", held)
            baseline = await asyncio.to_thread(actors)
            try:
                future = rt.session("late").run("x")
                assert await asyncio.to_thread(store.entered.wait, TIMEOUT)
                assert await asyncio.to_thread(held.entered.wait, TIMEOUT)
                clock.advance(ACTIVATION)
                assert (await _error(future)).code == "RUNTIME_TIMEOUT"
                held.released.set()  # the start is reported now, after the timeout
                await asyncio.to_thread(
                    eventually, lambda: actors() == baseline, timeout=TIMEOUT, what="no actor left"
                )
                assert rt.registry.lookup("late") is None
                assert rt.statistics().live_sessions == 0
            finally:
                held.released.set()
                store.released.set()
            assert (await rt.session("late").arun("y")).output == "y"

    asyncio.run(main())
    assert_no_new_threads(before, TIMEOUT)
