"""The event bus: subscriptions, filters, bounded buffers, dead subscribers, sinks and streams."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pykka
import pytest
from _helpers import captured_logs
from _runtime_helpers import TIMEOUT, echo_agent, error_code

from praxo_actors import PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.models import Event, ModelError
from praxo_actors.runtime import EventStream, JsonLinesSink, Runtime, StructlogSink
from praxo_actors.testing import EventRecorder, ScriptedModel
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]
ALL_TYPES = ["run.started", "model.requested", "model.responded", "run.completed"]


def _catch_all(rt: Runtime, session_id: str) -> EventRecorder:
    """Subscribe and return a recorder of every event of ``session_id``.

    The bus offers each event to every subscription before the next, so once this recorder
    has an event, every other subscription has been offered it too (see :func:`_wait_runs`).
    """
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="*", session_id=session_id)
    return recorder


def _wait_runs(recorder: EventRecorder, runs: int) -> None:
    """Wait (bounded) until ``recorder`` has seen ``runs`` runs end."""
    eventually(lambda: sum(t in ("run.completed", "run.failed") for t in recorder.types()) >= runs)


def test_subscriber_gets_a_runs_events_in_order(runtime: Start) -> None:
    """The default pattern delivers ``run.*`` events of a run, numbered in order."""
    rt = runtime(agents={"default": echo_agent})
    recorder = EventRecorder()
    sub = rt.events.subscribe(recorder)
    future = rt.session("s1").run("hi")
    future.get(timeout=TIMEOUT)
    recorder.wait_for("run.completed", TIMEOUT)
    events = recorder.events
    assert [e.type for e in events] == ["run.started", "run.completed"]
    assert [e.seq for e in events] == [0, 3]
    assert {e.run_id for e in events} == {future.run_id}
    assert {e.session_id for e in events} == {"s1"}
    assert events[1].data["output"] == "hi"
    assert sub.statistics().delivered == 2


def test_star_pattern_gets_every_event(runtime: Start) -> None:
    """The ``*`` pattern delivers every event type of a run, seq 0, 1, 2, 3."""
    rt = runtime(agents={"default": echo_agent})
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="*")
    rt.session("s1").run("hi").get(timeout=TIMEOUT)
    recorder.wait_for("run.completed", TIMEOUT)
    assert recorder.types() == ALL_TYPES
    assert [e.seq for e in recorder.events] == [0, 1, 2, 3]


def test_pattern_and_session_filters(runtime: Start) -> None:
    """A subscription sees only events whose type matches its pattern and session its filter."""
    rt = runtime(agents={"default": echo_agent})
    models = EventRecorder()
    only_a = EventRecorder()
    sub_models = rt.events.subscribe(models, pattern="model.*")
    sub_a = rt.events.subscribe(only_a, pattern="*", session_id="a")
    everything = _catch_all(rt, "b")
    rt.session("a").run("1").get(timeout=TIMEOUT)
    rt.session("b").run("2").get(timeout=TIMEOUT)
    _wait_runs(everything, 1)
    assert sub_models.wait_idle(TIMEOUT) and sub_a.wait_idle(TIMEOUT)
    assert only_a.types() == ALL_TYPES
    assert {e.session_id for e in only_a.events} == {"a"}
    assert models.types() == ["model.requested", "model.responded"] * 2


def test_failed_run_publishes_run_failed_with_its_code(runtime: Start) -> None:
    """A run that fails with a code publishes ``run.failed`` carrying the code."""
    model = ScriptedModel([ModelError("RATE_LIMITED", "slow down")])
    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    recorder = EventRecorder()
    rt.events.subscribe(recorder)
    assert error_code(rt.session("s1").run("x")) == "RATE_LIMITED"
    failed = recorder.wait_for("run.failed", TIMEOUT)
    assert failed.data["code"] == "RATE_LIMITED"
    assert recorder.types() == ["run.started", "run.failed"]


def test_unsubscribe_stops_delivery(runtime: Start) -> None:
    """After ``unsubscribe()`` a subscriber gets nothing more and the subscription is gone."""
    rt = runtime(agents={"default": echo_agent})
    recorder = EventRecorder()
    sub = rt.events.subscribe(recorder)
    everything = _catch_all(rt, "s1")
    rt.session("s1").run("1").get(timeout=TIMEOUT)
    recorder.wait_for("run.completed", TIMEOUT)
    sub.unsubscribe()
    sub.unsubscribe()  # idempotent
    rt.session("s1").run("2").get(timeout=TIMEOUT)
    _wait_runs(everything, 2)
    assert recorder.types() == ["run.started", "run.completed"]
    assert not sub.active
    assert sub not in rt.events.subscriptions


def test_subscriber_that_raises_is_removed(runtime: Start) -> None:
    """A subscriber that raises is removed, and the others keep receiving."""
    rt = runtime(agents={"default": echo_agent})
    calls: list[Event] = []

    def broken(event: Event) -> None:
        calls.append(event)
        raise RuntimeError("subscriber broke")

    sub = rt.events.subscribe(broken, pattern="*")
    everything = _catch_all(rt, "s1")
    rt.session("s1").run("1").get(timeout=TIMEOUT)
    rt.session("s1").run("2").get(timeout=TIMEOUT)
    _wait_runs(everything, 2)
    assert sub.wait_idle(TIMEOUT)
    assert len(calls) == 1
    assert not sub.active
    assert sub not in rt.events.subscriptions
    assert everything.types() == ALL_TYPES * 2
    assert rt.statistics().subscriptions == 1


class _Collector(pykka.ThreadingActor):
    """An actor that keeps the events it is asked with."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[Event] = []

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Event):
            self.events.append(message)
        return None

    def types(self) -> list[str]:
        return [e.type for e in self.events]


def test_actor_subscriber_receives_events_and_is_removed_once_stopped(runtime: Start) -> None:
    """An actor subscriber is asked with each event; once it stops, it is removed."""
    rt = runtime(agents={"default": echo_agent})
    ref = _Collector.start()
    try:
        sub = rt.events.subscribe(ref)
        everything = _catch_all(rt, "s1")
        rt.session("s1").run("1").get(timeout=TIMEOUT)
        _wait_runs(everything, 1)
        assert sub.wait_idle(TIMEOUT)
        assert ref.proxy().types().get(timeout=TIMEOUT) == ["run.started", "run.completed"]
    finally:
        ref.stop(timeout=TIMEOUT)
    rt.session("s1").run("2").get(timeout=TIMEOUT)
    _wait_runs(everything, 2)
    assert sub.wait_idle(TIMEOUT)
    assert not sub.active
    assert sub not in rt.events.subscriptions


def test_slow_subscriber_drops_beyond_its_buffer_and_counts(runtime: Start) -> None:
    """A blocked subscriber with a small buffer drops the surplus, counted, and others lose none."""
    rt = runtime(agents={"default": echo_agent})
    release = threading.Event()
    got: list[Event] = []

    def slow(event: Event) -> None:
        if not release.wait(TIMEOUT):
            raise TimeoutError("never released")
        got.append(event)

    sub = rt.events.subscribe(slow, pattern="*", buffer=2)
    everything = _catch_all(rt, "s1")
    for n in range(3):
        rt.session("s1").run(f"{n}").get(timeout=TIMEOUT)
    _wait_runs(everything, 3)
    stats = sub.statistics()
    assert stats.dropped > 0
    assert stats.buffered <= 2
    release.set()
    assert sub.wait_idle(TIMEOUT)
    stats = sub.statistics()
    assert stats.delivered == len(got)
    assert stats.delivered + stats.dropped == 12
    assert [e.time_ns for e in got] == sorted(e.time_ns for e in got)
    assert everything.types() == ALL_TYPES * 3
    runtime_stats = rt.statistics()
    assert runtime_stats.events_dropped == stats.dropped
    assert runtime_stats.events_delivered == stats.delivered + 12


def test_each_subscriber_gets_its_own_copy(runtime: Start) -> None:
    """Two subscribers get equal but distinct events: one mutating its copy changes nothing else."""
    rt = runtime(agents={"default": echo_agent})
    first, second = EventRecorder(), EventRecorder()
    rt.events.subscribe(first)
    rt.events.subscribe(second)
    rt.session("s1").run("hi").get(timeout=TIMEOUT)
    a = first.wait_for("run.completed", TIMEOUT)
    b = second.wait_for("run.completed", TIMEOUT)
    assert a == b
    assert a is not b
    a.data["output"] = "changed"
    assert b.data["output"] == "hi"


def test_structlog_sink_logs_each_event(runtime: Start, caplog: pytest.LogCaptureFixture) -> None:
    """The structlog sink logs ``praxo.event`` with the event's fields."""
    rt = runtime(agents={"default": echo_agent})
    with captured_logs(caplog, "praxo_actors") as logs:
        sub = rt.events.subscribe(StructlogSink())
        everything = _catch_all(rt, "s1")
        future = rt.session("s1").run("hi")
        future.get(timeout=TIMEOUT)
        rt.session("s1").run("again").get(timeout=TIMEOUT)
        _wait_runs(everything, 2)
        assert sub.wait_idle(TIMEOUT)
    events = [entry for entry in logs if entry["event"] == "praxo.event"]
    assert [e["type"] for e in events][:2] == ["run.started", "run.completed"]
    assert events[0]["run_id"] == future.run_id
    assert events[0]["session_id"] == "s1"
    assert events[0]["log_level"] == "info"
    assert len(events) == 4


def test_json_lines_sink_writes_one_object_per_line(runtime: Start, tmp_path: Path) -> None:
    """The JSON Lines sink appends each event as one JSON object per line."""
    rt = runtime(agents={"default": echo_agent})
    path = tmp_path / "events.jsonl"
    sink = JsonLinesSink(path)
    sub = rt.events.subscribe(sink, pattern="*")
    everything = _catch_all(rt, "s1")
    future = rt.session("s1").run("hi")
    future.get(timeout=TIMEOUT)
    rt.session("s1").run("again").get(timeout=TIMEOUT)
    _wait_runs(everything, 2)
    assert sub.wait_idle(TIMEOUT)
    sink.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["type"] for line in lines] == ALL_TYPES * 2
    assert lines[0]["run_id"] == future.run_id
    assert sink.written == 8


def test_bad_subscriptions_are_refused(runtime: Start) -> None:
    """Bad subscribers, patterns, filters and buffers raise EVENTS_INVALID_SUBSCRIPTION."""
    rt = runtime(agents={"default": echo_agent})
    bad: list[dict[str, Any]] = [
        {"subscriber": "not callable"},
        {"subscriber": print, "pattern": ""},
        {"subscriber": print, "session_id": 5},
        {"subscriber": print, "buffer": 0},
        {"subscriber": print, "buffer": True},
    ]
    for kwargs in bad:
        with pytest.raises(PraxoError) as info:
            rt.events.subscribe(**kwargs)
        assert info.value.code == "EVENTS_INVALID_SUBSCRIPTION"
    assert rt.events.subscriptions == ()


def test_subscribe_after_stop_is_refused(runtime: Start) -> None:
    """Subscribing to a stopped runtime raises RUNTIME_STOPPED."""
    rt = runtime(agents={"default": echo_agent})
    rt.stop()
    with pytest.raises(PraxoError) as info:
        rt.events.subscribe(EventRecorder())
    assert info.value.code == "RUNTIME_STOPPED"


def test_stream_yields_events_in_asyncio(runtime: Start) -> None:
    """``async for`` over a stream yields a run's events in order."""
    rt = runtime(agents={"default": echo_agent})

    async def main() -> list[str]:
        types: list[str] = []
        async with rt.events.stream(pattern="*", session_id="s1") as events:
            await rt.session("s1").run("hi")
            async for event in events:
                types.append(event.type)
                if event.type == "run.completed":
                    break
        return types

    assert asyncio.run(main()) == ALL_TYPES
    assert rt.events.subscriptions == ()


def test_stream_is_subscribed_when_made(runtime: Start) -> None:
    """Events published after ``stream()`` returns, before the first await, are delivered."""
    rt = runtime(agents={"default": echo_agent})

    async def main() -> str:
        events = rt.events.stream(pattern="run.completed", session_id="x")
        assert len(rt.events.subscriptions) == 1
        await rt.session("x").run("hi")
        first = await asyncio.wait_for(anext(events), TIMEOUT)
        await events.aclose()
        return first.type

    assert asyncio.run(main()) == "run.completed"
    assert rt.events.subscriptions == ()


def test_stream_ends_when_the_runtime_stops(runtime: Start) -> None:
    """A stream's ``async for`` ends when the runtime stops."""
    rt = runtime(agents={"default": echo_agent})

    async def main() -> list[str]:
        types: list[str] = []
        completed = asyncio.Event()

        async def consume(events: EventStream) -> None:
            async with events:
                async for event in events:
                    types.append(event.type)
                    if event.type == "run.completed":
                        completed.set()

        task = asyncio.ensure_future(consume(rt.events.stream()))
        await rt.session("s1").run("hi")
        await asyncio.wait_for(completed.wait(), TIMEOUT)  # events come after the run's result
        await asyncio.get_running_loop().run_in_executor(None, rt.stop)
        await asyncio.wait_for(task, TIMEOUT)
        return types

    assert asyncio.run(main()) == ["run.started", "run.completed"]


def test_stream_behind_on_events_still_ends_when_the_runtime_stops(runtime: Start) -> None:
    """A stream whose consumer fell behind its buffer still ends when the runtime stops."""
    rt = runtime(agents={"default": echo_agent})

    async def main() -> int:
        async with rt.events.stream(pattern="*", buffer=1) as events:
            (sub,) = rt.events.subscriptions
            for n in range(3):
                await rt.session("s1").run(f"{n}")
            loop = asyncio.get_running_loop()
            assert await loop.run_in_executor(None, sub.wait_idle, TIMEOUT)
            await loop.run_in_executor(None, rt.stop)
            received = [event async for event in events]
            assert events.dropped + sub.statistics().dropped >= 1
        return len(received)

    assert asyncio.run(main()) == 1


def test_stream_of_a_stopped_runtime_ends_at_once(runtime: Start) -> None:
    """Iterating a stream of a stopped runtime yields nothing and ends."""
    rt = runtime(agents={"default": echo_agent})
    rt.stop()

    async def main() -> list[Event]:
        async with rt.events.stream() as events:
            return [event async for event in events]

    assert asyncio.run(main()) == []


# -- stuck subscribers -----------------------------------------------------------------------


class _Counter:
    """A subscriber that counts the events it gets; ``wait_count`` waits (bounded) for ``n``."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.count = 0

    def __call__(self, _event: Event) -> None:
        with self._changed:
            self.count += 1
            self._changed.notify_all()

    def wait_count(self, n: int, timeout: float = TIMEOUT) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self.count >= n, timeout)


class _Hang(_Counter):
    """A counting subscriber whose calls block until ``release`` is set (bounded, so that a
    failing test still ends its threads)."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self._release = release

    def __call__(self, event: Event) -> None:
        super().__call__(event)
        self._release.wait(TIMEOUT * 3)


class _HangingActor(pykka.ThreadingActor):
    """An actor subscriber whose ``on_receive`` blocks until ``release`` is set (bounded)."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self._release = release

    def on_receive(self, message: Any) -> Any:
        self._release.wait(TIMEOUT * 3)
        return None


def test_stuck_subscribers_do_not_starve_the_others(
    runtime: Start, caplog: pytest.LogCaptureFixture
) -> None:
    """With more stuck subscribers (callables and actors) than delivery threads, a well-behaved
    subscriber still gets every event; each stuck one is reported once, holds ``buffer`` events
    (the one in its call included), counts the rest dropped, and resumes from its buffer once
    its call returns."""
    runs, buffer = 3000, 5
    rt = runtime(agents={"default": echo_agent}, delivery_threads=2, subscriber_timeout=0.1)
    release = threading.Event()
    actors = [_HangingActor.start(release) for _ in range(2)]
    try:
        with captured_logs(caplog, "praxo_actors.events", logging.INFO) as logs:
            stuck = [
                rt.events.subscribe(target, pattern="run.completed", buffer=buffer)
                for target in [_Hang(release) for _ in range(3)] + actors
            ]
            good = _Counter()
            rt.events.subscribe(good, pattern="run.completed", buffer=runs)
            rt.session("s0").run("first").get(timeout=TIMEOUT)
            assert good.wait_count(1), "the well-behaved subscriber waits behind stuck ones"
            # Every stuck subscriber is now in a call on a thread that has left the pool.
            eventually(lambda: all(sub.statistics().stuck for sub in stuck))
            futures = [rt.session(f"s{n % 100}").run(f"{n}") for n in range(1, runs)]
            for future in futures:
                future.get(timeout=TIMEOUT)
            assert good.wait_count(runs), f"the well-behaved subscriber got {good.count}/{runs}"
            for sub in stuck:
                stats = sub.statistics()
                assert (stats.delivered, stats.buffered, stats.stuck) == (0, buffer, True)
                assert stats.dropped == runs - buffer
            release.set()
            for sub in stuck:
                assert sub.wait_idle(TIMEOUT)
        assert good.count == runs
        for sub in stuck:
            stats = sub.statistics()
            assert (stats.delivered, stats.dropped, stats.buffered) == (buffer, runs - buffer, 0)
            assert stats.active and not stats.stuck
        # (A well-behaved call that a loaded machine stalls past 0.1 s is reported too.)
        reported = [entry for entry in logs if entry["event"] == "subscriber_stuck"]
        assert {sub.id for sub in stuck} <= {entry["subscription"] for entry in reported}
        assert all(entry["log_level"] == "warning" for entry in reported)
        assert rt.statistics().events_dropped == len(stuck) * (runs - buffer)
    finally:
        release.set()
        for ref in actors:
            ref.stop(timeout=TIMEOUT)


def test_subscribers_that_never_return_do_not_hold_the_pool(runtime: Start) -> None:
    """With default settings, while six subscribers never return, a well-behaved one with the
    default buffer gets every event of a burst of 3,000 runs: each slow call leaves the shared
    delivery pool for a thread of its own after the hand-off time."""
    runs = 3000
    rt = runtime(agents={"default": echo_agent})
    release = threading.Event()
    try:
        hung = [_Hang(release) for _ in range(6)]
        stuck = [rt.events.subscribe(target, pattern="run.completed") for target in hung]
        good = _Counter()
        sub = rt.events.subscribe(good, pattern="run.completed")
        futures = [rt.session(f"s{n % 100}").run(f"{n}") for n in range(runs)]
        for future in futures:
            future.get(timeout=TIMEOUT)
        assert good.wait_count(runs), f"the well-behaved subscriber got {good.count}/{runs}"
        assert sub.wait_idle(TIMEOUT)
        stats = sub.statistics()
        assert (stats.delivered, stats.dropped) == (runs, 0)
        assert all(target.wait_count(1) for target in hung)
        assert all(s.statistics().delivered == 0 for s in stuck)
    finally:
        release.set()
    for s in stuck:
        assert s.wait_idle(TIMEOUT)


def test_a_stuck_subscriber_stays_subscribed(runtime: Start) -> None:
    """A subscriber skipped as stuck is not unsubscribed: once its call returns it gets the
    events published after, as before."""
    rt = runtime(agents={"default": echo_agent}, delivery_threads=1, subscriber_timeout=0.05)
    release = threading.Event()
    hang = _Hang(release)
    sub = rt.events.subscribe(hang, pattern="run.completed", buffer=1)
    rt.session("s1").run("1").get(timeout=TIMEOUT)
    eventually(lambda: sub.statistics().stuck)
    release.set()
    assert sub.wait_idle(TIMEOUT)
    rt.session("s1").run("2").get(timeout=TIMEOUT)
    assert hang.wait_count(2)
    assert sub.wait_idle(TIMEOUT)
    stats = sub.statistics()
    assert (stats.delivered, stats.dropped, stats.active, stats.stuck) == (2, 0, True, False)
    assert sub in rt.events.subscriptions


@pytest.mark.parametrize("name", ["subscriber_timeout", "subscriber_handoff"])
@pytest.mark.parametrize("value", [0, -1.0, float("inf"), float("nan"), True, "5"])
def test_bad_subscriber_timeout_is_refused(runtime: Start, name: str, value: object) -> None:
    """A subscriber_timeout or subscriber_handoff that is not a positive, finite number is
    RUNTIME_INVALID_CONFIG."""
    with pytest.raises(PraxoError) as info:
        runtime(**{name: value})
    assert info.value.code == "RUNTIME_INVALID_CONFIG"


def test_astart_takes_subscriber_timeout() -> None:
    """``Runtime.open`` takes ``subscriber_timeout`` and ``subscriber_handoff`` as ``start``
    does, and checks them."""

    async def main() -> str:
        async with Runtime.open(
            idle_timeout=None, subscriber_timeout=0.5, subscriber_handoff=0.01
        ) as rt:
            assert rt.events.subscriptions == ()
        with pytest.raises(PraxoError) as info:
            await Runtime.astart(subscriber_timeout=-1)
        return info.value.code

    assert asyncio.run(main()) == "RUNTIME_INVALID_CONFIG"
