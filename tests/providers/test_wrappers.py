"""rate_limited and retrying: a budget shared across threads and loops, backoff on a clock."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from _helpers import say
from _model_servers import TIMEOUT
from _payloads import VirtualClock, request

from praxo_actors import AgentError
from praxo_actors.agent import arun_agent, fallback_model, new_agent_options
from praxo_actors.models import ModelError, Request, session
from praxo_actors.providers import rate_limited, retry_after, retrying
from praxo_actors.testing._eventually import eventually

LIMITED = ModelError("MODEL_RATE_LIMITED", "openai: HTTP 429: slow (retry after 2 s)")
DOWN = ModelError("MODEL_UNAVAILABLE", "down")


class Replies:
    """An async model returning its replies in order and counting its calls."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.calls = 0

    async def __call__(self, _request: Request) -> Any:
        self.calls += 1
        return self.replies.pop(0)


class SyncReplies(Replies):
    """The same, as a plain (sync) model."""

    def __call__(self, _request: Request) -> Any:  # type: ignore[override]
        self.calls += 1
        return self.replies.pop(0)


def test_retry_after_reads_the_wait_back() -> None:
    """retry_after reads ``(retry after N s)`` at the end of a message, an error's or a run's."""
    assert retry_after(LIMITED) == 2.0
    assert retry_after(AgentError("MODEL_RATE_LIMITED", "x (retry after 0.25 s)")) == 0.25
    assert retry_after("no wait given") is None
    assert retry_after("(retry after 2 s) and then more") is None
    with pytest.raises(TypeError):
        retry_after(3)  # type: ignore[arg-type]


def test_retrying_backs_off_exponentially_with_jitter(clock: VirtualClock) -> None:
    """Waits double from base_delay, are jittered by ``random`` and capped at max_delay."""
    inner = Replies(DOWN, DOWN, DOWN, DOWN, say("ok"))
    jitter = iter([0.0, 1.0, 0.5, 0.0])
    model = retrying(
        inner, 5, base_delay=1.0, max_delay=3.0, clock=clock, random=lambda: next(jitter)
    )
    result = asyncio.run(model(request()))
    assert result == say("ok")
    assert inner.calls == 5
    # 1 * (0.5 + 0), 2 * (0.5 + 0.5), min(4, 3) * 0.75, 3 * 0.5
    assert clock.sleeps == [0.5, 2.0, 2.25, 1.5]


def test_retrying_honours_the_servers_retry_after(clock: VirtualClock) -> None:
    """A retry-after longer than the backoff is waited; one past max_delay stops at once."""
    far = ModelError("MODEL_RATE_LIMITED", "x (retry after 60 s)")
    inner = Replies(LIMITED, far)
    model = retrying(inner, 5, base_delay=0.1, max_delay=10.0, clock=clock, random=lambda: 0.0)
    assert asyncio.run(model(request())) == far
    assert inner.calls == 2
    assert clock.sleeps == [2.0]


def test_retrying_returns_other_codes_and_the_last_error_at_once(clock: VirtualClock) -> None:
    """A code not in retry_on comes back unretried; after the last attempt, its error."""
    bad = ModelError("MODEL_BAD_REQUEST", "no")
    once = Replies(bad)
    assert asyncio.run(retrying(once, 3, clock=clock)(request())) == bad
    assert once.calls == 1
    thrice = Replies(DOWN, DOWN, DOWN)
    assert asyncio.run(retrying(thrice, 3, clock=clock)(request())) == DOWN
    assert thrice.calls == 3
    assert len(clock.sleeps) == 2


def test_retrying_a_sync_model_stays_sync(clock: VirtualClock) -> None:
    """A sync model's retrying wrapper is sync and waits on the clock's blocking sleep."""
    inner = SyncReplies(DOWN, say("ok"))
    model = retrying(inner, 2, base_delay=1.0, clock=clock, random=lambda: 1.0)
    assert not asyncio.iscoroutinefunction(model.__call__)
    assert model(request()) == say("ok")
    assert clock.sleeps == [1.0]


def test_retrying_composes_with_fallback_model_both_ways(clock: VirtualClock) -> None:
    """fallback_model(retrying(a), b) retries a first; retrying(fallback_model(a, b)) the chain."""
    a, b = Replies(DOWN, DOWN), Replies(say("from b"))
    options = new_agent_options(fallback_model(retrying(a, 2, clock=clock), b))
    result = asyncio.run(arun_agent(options, session("s"), "hi"))
    assert (result.output, a.calls, b.calls, result.model_calls) == ("from b", 2, 1, 1)

    a, b = Replies(DOWN, say("from a")), Replies(DOWN)
    chain = retrying(fallback_model(a, b), 2, clock=clock)
    result = asyncio.run(arun_agent(new_agent_options(chain), session("s"), "hi"))
    assert (result.output, a.calls, b.calls) == ("from a", 2, 1)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"model": "not callable"}, TypeError),
        ({"attempts": 0}, ValueError),
        ({"attempts": True}, TypeError),
        ({"base_delay": -1}, ValueError),
        ({"base_delay": 5, "max_delay": 1}, ValueError),
        ({"max_delay": float("nan")}, ValueError),
        ({"retry_on": "MODEL_UNAVAILABLE"}, TypeError),
        ({"retry_on": ()}, ValueError),
        ({"retry_on": (1,)}, TypeError),
        ({"random": 0.5}, TypeError),
    ],
)
def test_retrying_refuses_bad_arguments(kwargs: dict[str, Any], error: type[Exception]) -> None:
    """Each bad argument is refused when the wrapper is made."""
    arguments: dict[str, Any] = {"model": Replies()}
    arguments.update(kwargs)
    with pytest.raises(error):
        retrying(**arguments)


def test_rate_limited_spaces_starts_by_the_rate(clock: VirtualClock) -> None:
    """With 2 requests per second and a burst of 2, calls 3 and on wait 0.5 s each."""
    inner = Replies(*[say(str(n)) for n in range(5)])
    model = rate_limited(inner, 2, None, burst=2, clock=clock)

    async def go() -> list[Any]:
        return [await model(request()) for _ in range(5)]

    assert [r.message.content for r in asyncio.run(go())] == ["0", "1", "2", "3", "4"]
    assert clock.sleeps == [0.5, 0.5, 0.5]
    assert model.limit.statistics().started == 5


def test_rate_limited_a_sync_model_blocks_its_thread(clock: VirtualClock) -> None:
    """A sync model stays sync; its calls wait on the clock's blocking sleep."""
    model = rate_limited(SyncReplies(say("a"), say("b")), 4, 1, clock=clock)
    assert not asyncio.iscoroutinefunction(model.__call__)
    assert [model(request()).message.content for _ in range(2)] == ["a", "b"]
    assert clock.sleeps == [0.25]


class Gate:
    """An async model that blocks (on a thread event) until released, counting peak calls."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)
        self.lock = threading.Lock()
        self.running = self.peak = 0

    async def __call__(self, _request: Request) -> Any:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        self.entered.release()
        await asyncio.get_running_loop().run_in_executor(None, self.release.wait, TIMEOUT)
        with self.lock:
            self.running -= 1
        return say("done")


def test_one_budget_is_shared_by_calls_on_two_event_loops(no_thread_leaks: None) -> None:
    """max_concurrency holds across two threads, each running its own event loop."""
    gate = Gate()
    model = rate_limited(gate, None, 1)
    results: list[Any] = []

    def run() -> None:
        results.append(asyncio.run(model(request())))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    assert gate.entered.acquire(timeout=TIMEOUT)  # one call is in
    eventually(lambda: model.limit.statistics().waiting == 1)  # the other waits for its slot
    assert model.limit.statistics().in_flight == 1
    gate.release.set()
    for thread in threads:
        thread.join(TIMEOUT)
    assert [r.message.content for r in results] == ["done", "done"]
    assert gate.peak == 1
    assert model.limit.statistics() == type(model.limit.statistics())(0, 0, 2)


def test_sync_and_async_callers_share_one_budget(no_thread_leaks: None) -> None:
    """A thread calling a sync limited model and a task on a loop share max_concurrency."""
    release, entered = threading.Event(), threading.Event()

    def blocking(_request: Request) -> Any:
        entered.set()
        release.wait(TIMEOUT)
        return say("sync")

    model = rate_limited(blocking, None, 1)
    worker = threading.Thread(target=model, args=(request(),))
    worker.start()
    assert entered.wait(TIMEOUT)
    second = threading.Thread(target=model, args=(request(),))
    second.start()
    eventually(lambda: model.limit.statistics().waiting == 1)
    release.set()
    worker.join(TIMEOUT)
    second.join(TIMEOUT)
    assert model.limit.statistics().started == 2


def test_a_cancelled_waiter_gives_up_its_place(no_thread_leaks: None) -> None:
    """A task cancelled while waiting leaves the queue; the slot goes to the next caller."""
    gate = Gate()
    model = rate_limited(gate, None, 1)

    async def go() -> Any:
        first = asyncio.create_task(model(request()))
        await asyncio.get_running_loop().run_in_executor(None, gate.entered.acquire)
        waiting = asyncio.create_task(model(request()))
        third = asyncio.create_task(model(request()))
        for _ in range(100):  # the two tasks start on the next turns of this loop
            if model.limit.statistics().waiting == 2:
                break
            await asyncio.sleep(0)
        assert model.limit.statistics().waiting == 2
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert model.limit.statistics().waiting == 1
        gate.release.set()
        return await first, await third

    first, third = asyncio.run(go())
    assert (first.message.content, third.message.content) == ("done", "done")
    assert model.limit.statistics().in_flight == 0


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        (("x", 1, 1), {}, TypeError),
        ((None, 0, 1), {}, ValueError),
        ((None, -1.0, 1), {}, ValueError),
        ((None, "1", 1), {}, TypeError),
        ((None, 1, 0), {}, ValueError),
        ((None, 1, 1.5), {}, TypeError),
        ((None, None, None), {}, ValueError),
        ((None, 1, None), {"burst": 0}, ValueError),
    ],
)
def test_rate_limited_refuses_bad_arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception]
) -> None:
    """Each bad argument is refused when the wrapper is made."""
    model, *limits = args
    with pytest.raises(error):
        rate_limited(model or Replies(), *limits, **kwargs)
