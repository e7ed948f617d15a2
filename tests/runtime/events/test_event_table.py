"""The event bus's subscription table: one owner, changes in order, snapshots read anywhere."""

from __future__ import annotations

import asyncio
import gc
import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pykka
import pytest
from _helpers import assert_no_new_threads
from _runtime_helpers import TIMEOUT, echo_agent

from praxo_actors import PraxoError
from praxo_actors.models import Event
from praxo_actors.runtime import EventStream, Runtime, Subscription, SubscriptionStatistics
from praxo_actors.runtime._events._bus import EventBus
from praxo_actors.runtime._events._router import EventRouter
from praxo_actors.runtime._events._table import SubscriptionTable
from praxo_actors.runtime._protocol import Publish, encode

Bus = tuple[EventRouter, pykka.ActorRef[Any]]


@pytest.fixture
def bus(request: pytest.FixtureRequest) -> Iterator[Bus]:
    """Start a router and a bus actor on it; stop both, and check no thread is left."""
    threads = getattr(request, "param", 2)
    before = set(threading.enumerate())
    # Subscribers here never stall: a long timeout keeps the watchdog out of the way.
    router = EventRouter(delivery_threads=threads, subscriber_timeout=60.0)
    ref: pykka.ActorRef[Any] = EventBus.start(router)
    try:
        yield router, ref
    finally:
        ref.stop(timeout=TIMEOUT)
        router.close(timeout=TIMEOUT)
        assert_no_new_threads(before, TIMEOUT)


def _event(ticket: int, source: str = "p") -> Event:
    return Event(
        type="tool.completed", run_id=source, session_id="s", seq=ticket, time_ns=0, data={}
    )


def _publish(ref: pykka.ActorRef[Any], *events: Event) -> None:
    ref.tell(encode(Publish(events=list(events))))


def _flush(ref: pykka.ActorRef[Any]) -> None:
    """Wait until the bus has routed everything told to it before (its mailbox is in order)."""
    ref.ask(encode(Publish(events=[])), timeout=TIMEOUT)


class _Recorder:
    """A subscriber that keeps the tickets (``seq``) it got and can wait for one past a mark."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.got: list[Event] = []
        self.closes = 0
        self._fail_at = fail_at
        self.armed = fail_at is not None  # it fails only once armed
        self._cond = threading.Condition()

    def __call__(self, event: Event) -> None:
        with self._cond:
            self.got.append(event)
            self._cond.notify_all()
        if self.armed and self._fail_at is not None and len(self.got) >= self._fail_at:
            raise RuntimeError("subscriber broke")

    def closed(self) -> None:
        self.closes += 1

    def wait_count(self, n: int) -> bool:
        """Wait until ``n`` events have arrived."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.got) >= n, TIMEOUT)

    def wait_past(self, mark: int, stop: threading.Event) -> bool:
        """Wait until an event ticketed after ``mark`` arrives (False: ``stop`` came first)."""
        with self._cond:
            return self._cond.wait_for(
                lambda: stop.is_set() or any(e.seq > mark for e in self.got), TIMEOUT
            ) and any(e.seq > mark for e in self.got)


def test_subscribe_and_unsubscribe_race_publication(bus: Bus) -> None:
    """Subscriptions made and ended on many threads while four publish get every event told
    after ``subscribe`` returned, none told after ``unsubscribe`` returned, and the counts
    never fall."""
    router, ref = bus
    tickets = itertools.count(1)  # next() is atomic: a ticket orders a tell against a return
    stop = threading.Event()
    published: dict[str, list[int]] = {}
    errors: list[str] = []

    def publisher(name: str) -> None:
        mine = published.setdefault(name, [])
        while not stop.is_set():
            for _ in range(20):
                ticket = next(tickets)
                mine.append(ticket)
                _publish(ref, _event(ticket, name))
            _flush(ref)  # keeps the bus's mailbox short: a publisher is not a flood

    ended: list[tuple[_Recorder, Subscription, int]] = []  # unsubscribed, ticket after
    kept: list[tuple[_Recorder, Subscription, int]] = []  # left on, ticket after subscribe

    def subscriber() -> None:
        for _ in range(15):
            recorder = _Recorder()
            sub = router.subscribe(recorder, "*", buffer=1_000_000)
            mark = next(tickets)
            if not recorder.wait_past(mark, stop):
                errors.append("no event arrived after subscribing")
                return
            sub.unsubscribe()
            ended.append((recorder, sub, next(tickets)))
        recorder = _Recorder()
        sub = router.subscribe(recorder, "*", buffer=1_000_000)
        kept.append((recorder, sub, next(tickets)))

    dying: list[tuple[_Recorder, Subscription]] = []

    def dier() -> None:
        for _ in range(10):
            recorder = _Recorder(fail_at=3)
            recorder.armed = False  # the hook is set after subscribe returns: fail after it
            sub = router.subscribe(recorder, "*")
            sub.on_close = recorder.closed
            recorder.armed = True
            dying.append((recorder, sub))

    def reader() -> None:
        last = router.statistics()
        while not stop.is_set():
            now = router.statistics()
            if now.delivered < last.delivered or now.dropped < last.dropped:
                errors.append(f"counts fell: {last} -> {now}")
            last = now

    publishers = [threading.Thread(target=publisher, args=(f"p{i}",)) for i in range(4)]
    workers = [threading.Thread(target=subscriber) for _ in range(6)]
    workers += [threading.Thread(target=dier) for _ in range(2)]
    watcher = threading.Thread(target=reader)
    for thread in [*publishers, watcher, *workers]:
        thread.start()
    for thread in workers:
        thread.join(TIMEOUT * 6)
    stop.set()
    for thread in [*publishers, watcher]:
        thread.join(TIMEOUT)
    assert not any(t.is_alive() for t in [*publishers, watcher, *workers])
    _flush(ref)
    for _, sub, _ in kept:
        assert sub.wait_idle(TIMEOUT)
    for _, sub in dying:
        assert sub.wait_idle(TIMEOUT)

    assert errors == []
    every = sorted(t for tickets_ in published.values() for t in tickets_)
    for recorder, sub, mark in kept:
        seen = [e.seq for e in recorder.got]
        assert len(seen) == len(set(seen))  # nothing twice
        assert {t for t in every if t > mark} <= set(seen)  # nothing after subscribe lost
        for name in published:  # each publisher's events in the order it told them
            theirs = [e.seq for e in recorder.got if e.run_id == name]
            assert theirs == sorted(theirs)
        assert sub.active and sub in router.subscriptions
    for recorder, sub, after in ended:
        assert max(e.seq for e in recorder.got) < after  # nothing told after unsubscribe
        assert not sub.active and sub not in router.subscriptions
    for recorder, sub in dying:
        # Removed once, at its first call armed from the 3rd on: nothing reached it after.
        assert len(recorder.got) >= 3 and recorder.closes == 1
        assert not sub.active and sub not in router.subscriptions
    assert router.subscription_count == len(kept) == 6

    router.close(timeout=TIMEOUT)
    everyone = [sub for _, sub, _ in [*ended, *kept]] + [sub for _, sub in dying]
    final = router.statistics()
    assert final.subscriptions == 0
    assert final.delivered == sum(sub.statistics().delivered for sub in everyone) > 0
    assert final.dropped == 0


@pytest.mark.parametrize("bus", [1], indirect=True)
def test_an_ended_subscriptions_counts_are_final(bus: Bus) -> None:
    """A call that returns after ``unsubscribe()`` is not counted, by the subscription or the
    bus, so the bus's totals and the subscriptions' own counts agree."""
    router, ref = bus
    entered, release = threading.Event(), threading.Event()
    later = _Recorder()

    def slow(_event: Event) -> None:
        entered.set()
        release.wait(TIMEOUT)

    sub = router.subscribe(slow, "*")
    other = router.subscribe(later, "*")
    _publish(ref, _event(1))
    assert entered.wait(TIMEOUT)
    sub.unsubscribe()
    release.set()
    # One delivery thread: ``other`` gets its event only once ``slow``'s drain has finished.
    assert other.wait_idle(TIMEOUT) and len(later.got) == 1
    assert sub.statistics() == SubscriptionStatistics(
        delivered=0, dropped=0, buffered=0, active=False
    )
    # What the kernel's statistics sum: the ended subscriptions' totals and the live ones.
    counted = router.delivered_total + sum(s.statistics().delivered for s in router.subscriptions)
    assert counted == sub.statistics().delivered + other.statistics().delivered == 1


def test_a_dead_subscriber_is_removed_once(bus: Bus) -> None:
    """A subscriber that raises while eight threads unsubscribe it is removed once: its hook
    runs once and its counts enter the totals once."""
    router, ref = bus
    recorder = _Recorder(fail_at=6)
    sub = router.subscribe(recorder, "*")
    sub.on_close = recorder.closed
    _publish(ref, *(_event(i) for i in range(1, 6)))
    _flush(ref)
    assert sub.wait_idle(TIMEOUT) and sub.statistics().delivered == 5
    start = threading.Barrier(9)

    def end() -> None:
        start.wait(TIMEOUT)
        sub.unsubscribe()

    threads = [threading.Thread(target=end) for _ in range(8)]
    for thread in threads:
        thread.start()
    _publish(ref, _event(6))  # the 6th call raises
    start.wait(TIMEOUT)
    for thread in threads:
        thread.join(TIMEOUT)
    _flush(ref)
    assert sub.wait_idle(TIMEOUT)
    assert recorder.closes == 1
    assert not sub.active and router.subscriptions == ()
    assert router.delivered_total == 5 and router.statistics().delivered == 5


def test_each_hook_runs_once_however_many_threads_end_it(bus: Bus) -> None:
    """Subscriptions unsubscribed from four threads at once, while the bus closes, each run
    their ``on_close`` hook exactly once."""
    router, _ = bus
    counts = [0] * 200
    lock = threading.Lock()

    def hook(i: int) -> Callable[[], None]:
        def closed() -> None:
            with lock:
                counts[i] += 1

        return closed

    subs = [router.subscribe(lambda _e: None, "*") for _ in counts]
    for i, sub in enumerate(subs):
        sub.on_close = hook(i)
    start = threading.Barrier(5)

    def end(order: list[Subscription]) -> None:
        start.wait(TIMEOUT)
        for sub in order:
            sub.unsubscribe()

    def close() -> None:
        start.wait(TIMEOUT)
        router.close(timeout=TIMEOUT)

    orders = [subs, subs[::-1], subs[1::2] + subs[::2], subs[::2] + subs[1::2]]
    threads = [threading.Thread(target=end, args=(order,)) for order in orders]
    threads.append(threading.Thread(target=close))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert counts == [1] * len(counts)
    assert router.closed and router.subscriptions == ()


def test_a_subscribe_racing_close_is_taken_and_ended_or_refused(bus: Bus) -> None:
    """Subscribing while the bus closes either gives a subscription that close ends (hook
    run) or ``RUNTIME_STOPPED``; nothing is left active, and later subscribes are refused."""
    router, _ = bus
    start = threading.Barrier(5)
    taken: list[tuple[Subscription, _Recorder]] = []
    refused: list[str] = []

    def subscribe() -> None:
        start.wait(TIMEOUT)
        for _ in range(100):
            recorder = _Recorder()
            try:
                sub = router.subscribe(recorder, "*")
            except PraxoError as exc:
                refused.append(exc.code)
                continue
            sub.on_close = recorder.closed
            taken.append((sub, recorder))

    threads = [threading.Thread(target=subscribe) for _ in range(4)]
    for thread in threads:
        thread.start()
    start.wait(TIMEOUT)
    router.close(timeout=TIMEOUT)
    for thread in threads:
        thread.join(TIMEOUT)
    assert len(taken) + len(refused) == 400
    assert set(refused) <= {"RUNTIME_STOPPED"}
    for sub, recorder in taken:
        assert not sub.active
        # Its hook ran at close, unless it was set after close had ended it.
        assert recorder.closes in (0, 1)
    with pytest.raises(PraxoError) as info:
        router.subscribe(_Recorder(), "*")
    assert info.value.code == "RUNTIME_STOPPED"


def test_a_change_the_owner_does_not_answer_in_time_fails_with_a_code() -> None:
    """A change that waits past the table's timeout fails with ``RUNTIME_TIMEOUT``; the owner
    applies it once free, and the table closes cleanly."""
    before = set(threading.enumerate())
    router = EventRouter(delivery_threads=1)
    table = SubscriptionTable(timeout=0.05, name="test-events-table")
    sub = Subscription(router, lambda _e: None, "*", None, 10)
    try:
        assert table.add(sub)
        # The owner ends a subscription under its lock: held here, the owner waits for it.
        with sub._lock, pytest.raises(PraxoError) as info:
            table.remove(sub)
        assert info.value.code == "RUNTIME_TIMEOUT"
    finally:
        assert table.close() == ()  # the removal went through first: nothing left to end
        router.close(timeout=TIMEOUT)
    assert not sub.active and table.snapshot.subscriptions == ()
    assert_no_new_threads(before, TIMEOUT)


def _dropped_stream(router: EventRouter) -> Subscription:
    """Make a stream, drop it without ``aclose()`` in a cycle (so only the collector frees
    it), and return its subscription."""

    async def make() -> EventStream:
        return EventStream(router, "*", None, 10)

    loop = asyncio.new_event_loop()
    try:
        stream = loop.run_until_complete(make())
    finally:
        loop.close()
    sub = stream._sub
    assert sub is not None and sub.active
    stream.cycle = stream  # type: ignore[attr-defined]
    del stream
    return sub


def _in_order(router: EventRouter) -> None:
    """Wait until every change posted before has been applied (the owner keeps their order)."""
    router.subscribe(lambda _e: None, "*").unsubscribe()


def test_a_dropped_stream_collected_in_a_subscriber_call_is_unsubscribed(bus: Bus) -> None:
    """A stream dropped without ``aclose()`` and collected on a delivery thread, inside a
    subscriber's call, is unsubscribed without that thread waiting on anything."""
    router, ref = bus
    victim = _dropped_stream(router)
    collected = threading.Event()

    def collector(_event: Event) -> None:
        gc.collect()
        collected.set()

    router.subscribe(collector, "*")
    _publish(ref, _event(1))
    assert collected.wait(TIMEOUT)
    _in_order(router)
    assert not victim.active and victim not in router.subscriptions


def test_an_unsubscribe_on_the_owners_thread_is_queued_not_waited_for(bus: Bus) -> None:
    """An ``unsubscribe()`` that the collector runs on the table owner's own thread (the only
    code but the owner's that can run there) is applied after the change under way; the
    owner never waits for itself."""
    router, _ = bus
    victim = router.subscribe(lambda _e: None, "*")
    answers: list[bool] = []

    def on_owner(phase: str, _info: dict[str, Any]) -> None:
        if (
            phase == "start"
            and not answers
            and threading.current_thread().name == ("praxo-events-table")
        ):
            answers.append(router.remove(victim))

    threshold = gc.get_threshold()
    gc.callbacks.append(on_owner)
    gc.set_threshold(1)  # a collection at almost every allocation, the owner's included
    try:
        for _ in range(1000):
            if answers:
                break
            _in_order(router)
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(on_owner)
    assert answers == [False]  # queued: its caller is not told (it cannot wait for it)
    _in_order(router)
    assert not victim.active and router.subscriptions == ()


def test_runs_sent_after_subscribe_returns_are_seen_from_many_threads(
    runtime: Callable[..., Runtime],
) -> None:
    """On a runtime with no subscriber yet (so its sessions build no events), eight threads
    each subscribe and then run their own session: each sees its run's events from the first,
    and once each has unsubscribed the runtime's counts agree with the subscriptions'."""
    rt = runtime(agents={"default": echo_agent})
    seen: dict[int, _Recorder] = {}
    subs: dict[int, Subscription] = {}
    start = threading.Barrier(8)
    errors: list[str] = []

    def client(i: int) -> None:
        recorder = seen[i] = _Recorder()
        start.wait(TIMEOUT)
        sub = subs[i] = rt.events.subscribe(recorder, "run.*", session_id=f"s{i}")
        result = rt.session(f"s{i}").run(f"hello {i}").get(timeout=TIMEOUT)
        # The run settles once committed; its events reach the bus on their own way.
        if not recorder.wait_count(2) or result.output != f"hello {i}":
            errors.append(f"client {i} did not see its run")
        sub.unsubscribe()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT * 2)
    assert errors == [] and not any(t.is_alive() for t in threads)
    for i, recorder in seen.items():
        assert [e.type for e in recorder.got] == ["run.started", "run.completed"]
        assert {e.session_id for e in recorder.got} == {f"s{i}"}
    stats = rt.statistics()
    assert stats.subscriptions == 0
    assert stats.events_delivered == sum(s.statistics().delivered for s in subs.values()) == 16


def test_runtime_statistics_event_counts_never_fall_while_subscriptions_end() -> None:
    """``Runtime.statistics()`` reads the bus's counters from one snapshot: while runs publish
    and subscriptions end on other threads, ``events_delivered`` never falls."""
    errors: list[str] = []
    stop = threading.Event()
    with Runtime.start(idle_timeout=None) as runtime:
        runtime.register_agent("default", echo_agent)
        handle = runtime.session("s")

        waiting: list[threading.Semaphore] = []

        def churn() -> None:
            while not stop.is_set():
                seen = threading.Semaphore(0)
                waiting.append(seen)  # released at the end, so no churn waits past the runs
                sub = runtime.events.subscribe(lambda _event, s=seen: s.release(), "*")
                for _ in range(20):  # counts worth losing when it ends
                    if stop.is_set() or not seen.acquire(timeout=TIMEOUT):
                        break
                sub.unsubscribe()

        def reader() -> None:
            last = runtime.statistics()
            while not stop.is_set():
                now = runtime.statistics()
                if now.events_delivered < last.events_delivered:
                    errors.append(f"{last.events_delivered} -> {now.events_delivered}")
                last = now

        threads = [threading.Thread(target=churn) for _ in range(3)]
        threads.append(threading.Thread(target=reader))
        for thread in threads:
            thread.start()
        try:
            for i in range(400):
                handle.run(f"m{i}").get(timeout=TIMEOUT)
        finally:
            stop.set()
            for seen in list(waiting):
                seen.release(100)
            for thread in threads:
                thread.join(TIMEOUT)
        assert not any(t.is_alive() for t in threads)
        assert runtime.statistics().events_delivered > 0
    assert errors == []
