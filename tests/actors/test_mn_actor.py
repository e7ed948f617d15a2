"""MNActor on a shared Scheduler: one message at a time, FIFO, fairness and the Pykka lifecycle."""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pykka
import pytest
from _helpers import captured_logs

from praxo_actors import PraxoError
from praxo_actors.actors import (
    MNActor,
    MNFuture,
    Scheduler,
    SchedulerClosedError,
    SchedulerStatistics,
    _sched,
    blocking,
    default_scheduler,
)
from praxo_actors.testing._eventually import eventually
from supervisors import _pykka_compat as compat

WAIT = 10.0


@pytest.fixture
def sched() -> Iterator[Scheduler]:
    """A two-thread scheduler, shut down (with every actor on it) after the test."""
    scheduler = Scheduler(2, name="test-mn")
    yield scheduler
    scheduler.shutdown(timeout=WAIT)


@pytest.fixture
def sched1() -> Iterator[Scheduler]:
    """A one-thread scheduler, shut down (with every actor on it) after the test."""
    scheduler = Scheduler(1, name="test-mn1")
    yield scheduler
    scheduler.shutdown(timeout=WAIT)


def _scheduler_threads(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix + "-")]


class Counter(MNActor):
    """Counts messages and records any second thread found inside a handler."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0
        self.overlaps = 0
        self.threads: set[str] = set()
        self._inside = threading.Lock()

    def on_receive(self, message: Any) -> Any:
        if not self._inside.acquire(blocking=False):
            self.overlaps += 1
            return None
        try:
            self.threads.add(threading.current_thread().name)
            before = self.count
            # Give up the GIL mid-update: a second thread allowed in would now lose a count.
            os.sched_yield()
            self.count = before + 1
            return self.count
        finally:
            self._inside.release()

    def stats(self) -> tuple[int, int, set[str]]:
        return self.count, self.overlaps, set(self.threads)


class Recorder(MNActor):
    """Keeps every message it receives, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def on_receive(self, message: Any) -> Any:
        self.seen.append(message)
        return len(self.seen)

    def log(self) -> list[Any]:
        return list(self.seen)


class Gated(MNActor):
    """Blocks its first message until ``gate`` is set, then counts what follows."""

    def __init__(self, gate: threading.Event, entered: threading.Event) -> None:
        super().__init__()
        self.gate = gate
        self.entered = entered
        self.handled = 0

    def on_receive(self, message: Any) -> Any:
        if message == "block":
            self.entered.set()
            self.gate.wait(WAIT)
        elif message == "boom":
            raise RuntimeError("tell failed")
        self.handled += 1
        return self.handled


def test_counter_is_exact_under_concurrent_senders(sched: Scheduler) -> None:
    """A counter hit by many threads ends exact, with never two threads inside a handler."""
    ref = Counter.start(actor_scheduler=sched)
    senders, per_sender = 8, 300

    def send() -> None:
        for i in range(per_sender):
            if i % 2:
                ref.tell("tick")
            else:
                ref.ask("tick", timeout=WAIT)

    threads = [threading.Thread(target=send) for _ in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive()
    count, overlaps, names = ref.proxy().stats().get(timeout=WAIT)
    assert (count, overlaps) == (senders * per_sender, 0)
    assert names and all(name.startswith("test-mn-") for name in names)


def test_messages_from_one_sender_arrive_in_order(sched: Scheduler) -> None:
    """Messages told by one thread are handled in the order they were sent."""
    ref = Recorder.start(actor_scheduler=sched)
    for i in range(1000):
        ref.tell(i)
    assert ref.proxy().log().get(timeout=WAIT) == list(range(1000))


def test_each_sender_keeps_its_order_among_many(sched: Scheduler) -> None:
    """With several senders interleaved, each sender's messages stay in its own order."""
    ref = Recorder.start(actor_scheduler=sched)

    def send(name: int) -> None:
        for i in range(300):
            ref.tell((name, i))

    threads = [threading.Thread(target=send, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive()
    log = ref.proxy().log().get(timeout=WAIT)
    assert len(log) == 1200
    for name in range(4):
        assert [i for n, i in log if n == name] == list(range(300))


class Snooper(MNActor):
    """Reports how far another actor has got, read from a shared list without asking it."""

    def __init__(self, progress: list[int]) -> None:
        super().__init__()
        self.progress = progress

    def on_receive(self, message: Any) -> Any:
        return len(self.progress)


class Appender(MNActor):
    """Appends each message to a shared list."""

    def __init__(self, progress: list[int]) -> None:
        super().__init__()
        self.progress = progress

    def on_receive(self, message: Any) -> Any:
        self.progress.append(message)


def test_a_flooding_actor_does_not_starve_another(sched1: Scheduler) -> None:
    """A second actor's ask is answered after one batch of a flood, while the rest is queued."""
    progress: list[int] = []
    gate, entered = threading.Event(), threading.Event()
    blocker = Gated.start(gate, entered, actor_scheduler=sched1)
    flooded = Appender.start(progress, actor_scheduler=sched1)
    snooper = Snooper.start(progress, actor_scheduler=sched1)
    blocker.tell("block")
    assert entered.wait(WAIT)
    # The only thread is held by the blocker, so the whole flood and the ask queue up first.
    flood = 10 * sched1.batch
    for i in range(flood):
        flooded.tell(i)
    seen = snooper.ask("peek", block=False)
    gate.set()
    assert seen.get(timeout=WAIT) == sched1.batch
    assert flooded.ask("done", timeout=WAIT) is None
    assert len(progress) == flood + 1


def test_ten_thousand_actors_share_the_pool_threads() -> None:
    """10,000 actors each answer one ask on two threads, and stopping them leaves none."""
    before = threading.active_count()
    scheduler = Scheduler(2, name="test-mn10k")
    try:
        refs = [Recorder.start(actor_scheduler=scheduler) for _ in range(10_000)]
        replies = [ref.ask(i, block=False) for i, ref in enumerate(refs)]
        assert [reply.get(timeout=WAIT) for reply in replies] == [1] * 10_000
        assert threading.active_count() == before + 2
        assert scheduler.statistics().threads == 2
        stops = [ref.stop(block=False) for ref in refs]
        assert all(stop.get(timeout=WAIT) for stop in stops)
        assert not any(ref.is_alive() for ref in refs)
    finally:
        scheduler.shutdown(timeout=WAIT)
    assert threading.active_count() == before
    assert _scheduler_threads("test-mn10k") == []


class Lifecycle(MNActor):
    """Reports each lifecycle hook to a shared list."""

    def __init__(self, calls: list[str], fail_start: bool = False) -> None:
        super().__init__()
        self.calls = calls
        self.fail_start = fail_start

    def on_start(self) -> None:
        self.calls.append(f"start:{threading.current_thread().name}")
        if self.fail_start:
            raise RuntimeError("start failed")

    def on_stop(self) -> None:
        self.calls.append("stop")

    def on_failure(self, *exc_info: Any) -> None:
        self.calls.append(f"failure:{exc_info[1]}")

    def on_receive(self, message: Any) -> Any:
        if message == "raise":
            raise ValueError("ask failed")
        if message == "crash":
            raise RuntimeError("tell failed")
        return message


def test_on_start_runs_on_a_scheduler_thread_before_messages(sched: Scheduler) -> None:
    """``on_start`` runs first, on a scheduler thread, even for messages sent from __init__."""
    calls: list[str] = []

    class Greeter(Lifecycle):
        def __init__(self) -> None:
            super().__init__(calls)
            self.actor_ref.tell("early")

        def on_receive(self, message: Any) -> Any:
            self.calls.append(message)
            return message

    ref = Greeter.start(actor_scheduler=sched)
    assert ref.ask("late", timeout=WAIT) == "late"
    assert calls[0].startswith("start:test-mn-")
    assert calls[1:] == ["early", "late"]


def test_a_failing_on_start_stops_the_actor(sched: Scheduler) -> None:
    """An exception in ``on_start`` stops and unregisters the actor without ``on_stop``."""
    calls: list[str] = []
    ref = Lifecycle.start(calls, fail_start=True, actor_scheduler=sched)
    assert ref.actor_stopped.wait(WAIT)
    assert not ref.is_alive()
    assert ref not in pykka.ActorRegistry.get_all()
    assert [c.split(":")[0] for c in calls] == ["start"]
    with pytest.raises(pykka.ActorDeadError):
        ref.ask("hello", timeout=WAIT)


def test_an_ask_failure_goes_back_to_the_caller(sched: Scheduler) -> None:
    """An exception in an ask handler is raised by the caller's ``get`` and the actor lives."""
    calls: list[str] = []
    ref = Lifecycle.start(calls, actor_scheduler=sched)
    with pytest.raises(ValueError, match="ask failed"):
        ref.ask("raise", timeout=WAIT)
    assert ref.ask("still here", timeout=WAIT) == "still here"
    assert ref.is_alive()
    assert not any(c.startswith("failure") for c in calls)


def test_a_tell_failure_calls_on_failure_and_stops(sched1: Scheduler) -> None:
    """An exception in a told message runs ``on_failure``, stops the actor and fails queued asks."""
    calls: list[str] = []
    gate, entered = threading.Event(), threading.Event()
    blocker = Gated.start(gate, entered, actor_scheduler=sched1)
    ref = Lifecycle.start(calls, actor_scheduler=sched1)
    blocker.tell("block")
    assert entered.wait(WAIT)
    ref.tell("crash")
    queued = ref.ask("after", block=False)
    gate.set()
    with pytest.raises(pykka.ActorDeadError):
        queued.get(timeout=WAIT)
    assert not ref.is_alive()
    assert ref not in pykka.ActorRegistry.get_all()
    assert calls[1:] == ["failure:tell failed"]


def test_stop_handles_queued_messages_then_runs_on_stop(sched: Scheduler) -> None:
    """``stop`` handles what was queued before it, runs ``on_stop`` and unregisters the actor."""
    calls: list[str] = []
    ref = Lifecycle.start(calls, actor_scheduler=sched)
    replies = [ref.ask(i, block=False) for i in range(5)]
    assert ref.stop(timeout=WAIT) is True
    assert [r.get(timeout=WAIT) for r in replies] == list(range(5))
    assert calls[-1] == "stop"
    assert not ref.is_alive()
    assert ref not in pykka.ActorRegistry.get_all()
    assert ref.stop(timeout=WAIT) is False
    with pytest.raises(pykka.ActorDeadError):
        ref.tell("late")


def test_a_base_exception_in_on_start_spares_the_scheduler(
    sched: Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A BaseException in ``on_start`` stops the actor but not the scheduler's threads."""
    stop_all = pykka.ActorRegistry.stop_all
    stop_all_asked = threading.Event()

    def stop_all_and_note(*, block: bool = True, timeout: float | None = None) -> Any:
        try:
            return stop_all(block=block, timeout=timeout)
        finally:
            stop_all_asked.set()

    # The crash calls stop_all after it sets actor_stopped; an actor registered before that call
    # would be stopped by it, so the next actor starts only once the call has returned.
    monkeypatch.setattr(pykka.ActorRegistry, "stop_all", stop_all_and_note)
    uncaught: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", uncaught.append)

    class Exiting(MNActor):
        def on_start(self) -> None:
            raise SystemExit("bye")

    ref = Exiting.start(actor_scheduler=sched)
    assert ref.actor_stopped.wait(WAIT)
    assert stop_all_asked.wait(WAIT)
    assert ref not in pykka.ActorRegistry.get_all()
    fresh = Recorder.start(actor_scheduler=sched)
    assert fresh.ask("ok", timeout=WAIT) == 1
    # No worker died of it (threads retire only when no actor is left, and start again).
    assert uncaught == []
    assert 1 <= sched.statistics().threads <= 2


def test_proxies_call_methods_and_reach_attributes(sched: Scheduler) -> None:
    """A proxy calls methods and reads and writes attributes, returning MNFutures."""
    proxy = Recorder.start(actor_scheduler=sched).proxy()
    call = proxy.on_receive("x")
    assert isinstance(call, MNFuture)
    assert call.get(timeout=WAIT) == 1
    proxy.seen = ["a", "b"]
    assert proxy.seen.get(timeout=WAIT) == ["a", "b"]
    assert proxy.log().get(timeout=WAIT) == ["a", "b"]


def test_a_class_attribute_or_start_keyword_chooses_the_scheduler(sched: Scheduler) -> None:
    """``start(actor_scheduler=...)`` overrides the class attribute, which overrides the default."""

    class Where(MNActor):
        actor_scheduler = sched

        def on_receive(self, message: Any) -> Any:
            return threading.current_thread().name

    other = Scheduler(1, name="test-mn-other")
    try:
        assert Where.start().ask("?", block=True, timeout=WAIT).startswith("test-mn-")
        assert Where.start(actor_scheduler=other).ask("?", timeout=WAIT) == "test-mn-other-0"
    finally:
        other.shutdown(timeout=WAIT)


def test_the_default_scheduler_is_shared_and_replaced_once_shut_down() -> None:
    """``default_scheduler`` returns one scheduler, and a fresh one after a shutdown."""
    first = default_scheduler()
    try:
        assert default_scheduler() is first
        ref = Recorder.start()
        assert ref.ask("hi", timeout=WAIT) == 1
    finally:
        first.shutdown(timeout=WAIT)
    assert not ref.is_alive()
    second = default_scheduler()
    try:
        assert second is not first
        assert not second.closed
    finally:
        second.shutdown(timeout=WAIT)


def test_shutdown_stops_actors_and_leaves_no_thread() -> None:
    """A shut-down scheduler has stopped its actors, left no thread, and refuses new actors."""
    calls: list[str] = []
    scheduler = Scheduler(3, name="test-mn-down")
    refs = [Lifecycle.start(calls, actor_scheduler=scheduler) for _ in range(20)]
    assert [ref.ask(i, timeout=WAIT) for i, ref in enumerate(refs)] == list(range(20))
    assert len(_scheduler_threads("test-mn-down")) == 3
    scheduler.shutdown(timeout=WAIT)
    assert _scheduler_threads("test-mn-down") == []
    assert calls.count("stop") == 20
    assert not any(ref.is_alive() for ref in refs)
    assert scheduler.statistics() == SchedulerStatistics(
        size=3, threads=0, blocked=0, idle=0, ready=0, closed=True
    )
    with pytest.raises(SchedulerClosedError) as caught:
        Recorder.start(actor_scheduler=scheduler)
    assert isinstance(caught.value, PraxoError)
    assert caught.value.code == "RUNTIME_SCHEDULER_CLOSED"


class Asker(MNActor):
    """Asks another actor and waits for the reply inside its own handler."""

    def __init__(self, target: pykka.ActorRef[Any]) -> None:
        super().__init__()
        self.target = target

    def on_receive(self, message: Any) -> Any:
        return self.target.ask(message, timeout=WAIT)


def test_a_handler_may_wait_on_another_actor_with_one_thread(sched1: Scheduler) -> None:
    """With one thread, a handler waiting on a peer's reply gets it through a spare thread."""

    class Stats(MNActor):
        def on_receive(self, message: Any) -> Any:
            return sched1.statistics()

    asker = Asker.start(Stats.start(actor_scheduler=sched1), actor_scheduler=sched1)
    for _ in range(20):
        seen = asker.ask("stats", block=True, timeout=WAIT)
        assert (seen.threads, seen.blocked) == (2, 1)
        assert sched1.statistics().threads <= 2


def test_a_handler_waiting_on_itself_times_out(sched1: Scheduler) -> None:
    """An actor that asks itself with a timeout gets ``pykka.Timeout`` instead of hanging."""

    class Selfish(MNActor):
        def on_receive(self, message: Any) -> Any:
            if message == "outer":
                try:
                    self.actor_ref.ask("inner", timeout=0.05)
                except pykka.Timeout:
                    return "timed out"
            return message

    ref = Selfish.start(actor_scheduler=sched1)
    assert ref.ask("outer", timeout=WAIT) == "timed out"
    assert ref.ask("again", timeout=WAIT) == "again"


def test_blocking_lends_the_thread_to_other_actors(sched1: Scheduler) -> None:
    """Inside ``blocking()`` a spare thread runs other actors while the handler waits."""
    release = threading.Event()

    class Waiter(MNActor):
        def on_receive(self, message: Any) -> Any:
            with blocking():
                return release.wait(WAIT)

    waiter = Waiter.start(actor_scheduler=sched1)
    other = Recorder.start(actor_scheduler=sched1)
    pending = waiter.ask("wait", block=False)
    assert other.ask("free", timeout=WAIT) == 1
    release.set()
    assert pending.get(timeout=WAIT) is True


def test_blocking_outside_a_scheduler_does_nothing() -> None:
    """``blocking()`` on a plain thread is a no-op context."""
    with blocking():
        value = 1
    assert value == 1


def test_actor_stopped_is_a_lean_event(sched: Scheduler) -> None:
    """``actor_stopped`` is a threading.Event shared with the ref, settable and waitable."""
    ref = Recorder.start(actor_scheduler=sched)
    stopped = ref.actor_stopped
    assert isinstance(stopped, threading.Event)
    assert stopped.wait(0.01) is False
    ref.stop(timeout=WAIT)
    assert stopped.is_set()
    assert stopped.wait(WAIT) is True


def test_a_ref_reaches_its_actor_through_the_mailbox_without_a_weak_reference(
    sched: Scheduler,
) -> None:
    """An MNActor's ref holds no weak reference (its mailbox holds the actor while it runs):
    its proxy works while the actor runs, and is refused once it has stopped."""
    ref = Recorder.start(actor_scheduler=sched)
    actor = compat.actor_of(ref)
    assert actor is not None and actor.actor_ref is ref
    assert weakref.getweakrefcount(actor) == 0
    assert str(ref) == f"Recorder ({ref.actor_urn})" and ref.actor_class is Recorder
    assert ref.proxy().actor_ref is ref
    ref.stop(timeout=WAIT)
    # stop() returns once the stop event is set; the mailbox lets the actor go just after,
    # when its turn ends.
    eventually(lambda: compat.actor_of(ref) is None, timeout=WAIT)
    with pytest.raises(pykka.ActorDeadError):
        ref.proxy()


def test_scheduler_arguments_are_checked() -> None:
    """A scheduler needs at least one thread and a batch of at least one."""
    with pytest.raises(ValueError):
        Scheduler(0)
    with pytest.raises(ValueError):
        Scheduler(1, batch=0)


def test_an_mn_actor_shares_its_inbox_and_stop_event_with_its_ref() -> None:
    """The ref sees the actor's own mailbox and stop event, as Pykka's ``__init__`` would set."""
    actor = Recorder()
    assert actor.actor_ref.actor_stopped is actor.actor_stopped
    assert actor.actor_ref.actor_inbox is actor.actor_inbox
    assert actor.actor_urn.startswith("urn:uuid:")


def test_an_mn_actor_and_its_ref_keep_no_field_for_the_stop_event() -> None:
    """The stop event is the mailbox: read from it, kept in no field of the actor or its ref."""
    actor = Recorder()
    assert actor.actor_stopped is actor.actor_inbox
    assert "actor_stopped" not in vars(actor)
    assert "actor_stopped" not in type(actor.actor_ref).__slots__


def test_spare_threads_retire_once_idle(sched1: Scheduler, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the blocked handler resumes, the spare thread retires once idle for the linger time."""
    monkeypatch.setattr(_sched, "_LINGER", 0.02)
    asker = Asker.start(Recorder.start(actor_scheduler=sched1), actor_scheduler=sched1)
    assert asker.ask("hello", timeout=WAIT) == 1
    workers = _scheduler_threads("test-mn1")
    assert len(workers) == 2
    eventually(lambda: not all(t.is_alive() for t in workers), timeout=WAIT)
    assert sum(t.is_alive() for t in workers) == 1
    assert sched1.statistics().threads == 1


def test_no_spare_thread_means_a_bounded_wait_times_out(caplog: pytest.LogCaptureFixture) -> None:
    """With no spare threads allowed, a handler waiting on a peer times out and it is logged."""
    scheduler = Scheduler(1, name="test-mn-nospare", max_spare_threads=0)
    try:
        target = Recorder.start(actor_scheduler=scheduler)

        class Patient(Asker):
            def on_receive(self, message: Any) -> Any:
                try:
                    return self.target.ask(message, timeout=0.05)
                except pykka.Timeout:
                    return "timed out"

        patient = Patient.start(target, actor_scheduler=scheduler)
        with captured_logs(caplog, "praxo_actors") as logs:
            assert patient.ask("hi", timeout=WAIT) == "timed out"
        assert [e["event"] for e in logs] == ["scheduler.spare_threads_exhausted"]
        assert scheduler.statistics().threads == 1
    finally:
        scheduler.shutdown(timeout=WAIT)


def test_unregistered_actor_class_stays_out_of_pykka_registry() -> None:
    """An MNActor class with ``actor_registered = False`` is not in ``ActorRegistry`` yet works."""

    class Hidden(MNActor):
        actor_registered = False

        def on_receive(self, message: Any) -> Any:
            return message

    with Scheduler(1) as sched:
        ref = Hidden.start(actor_scheduler=sched)
        try:
            assert ref not in pykka.ActorRegistry.get_all()
            assert ref.ask("ping", timeout=5) == "ping"
        finally:
            assert ref.stop(timeout=5) is True
        assert not ref.is_alive()
