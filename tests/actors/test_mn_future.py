"""MNFuture: get from any thread, done callbacks, and await without blocking the event loop."""

from __future__ import annotations

import asyncio
import queue
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import pykka
import pytest
from _helpers import captured_logs

from praxo_actors.actors import MNActor, MNFuture, Scheduler

WAIT = 10.0


@pytest.fixture
def sched() -> Iterator[Scheduler]:
    """A two-thread scheduler, shut down (with every actor on it) after the test."""
    scheduler = Scheduler(2, name="test-future")
    yield scheduler
    scheduler.shutdown(timeout=WAIT)


class Slow(MNActor):
    """Replies once ``release`` is set; says so if it had to give up waiting."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self.release = release

    def on_receive(self, message: Any) -> Any:
        if message == "fail":
            raise ValueError("handler failed")
        if message == "slow":
            return "released" if self.release.wait(WAIT) else "gave up"
        return message

    def double(self, value: int) -> int:
        return 2 * value


def test_awaiting_a_slow_reply_lets_other_coroutines_run(sched: Scheduler) -> None:
    """While a coroutine awaits a slow reply, another keeps ticking and releases the reply."""
    release = threading.Event()
    ref = Slow.start(release, actor_scheduler=sched)

    async def ticker(counter: list[int]) -> None:
        while counter[0] < 100:
            counter[0] += 1
            await asyncio.sleep(0)
        release.set()

    async def main() -> tuple[Any, int]:
        counter = [0]
        reply = ref.ask("slow", block=False)
        tick = asyncio.create_task(ticker(counter))
        value = await reply
        await tick
        return value, counter[0]

    assert asyncio.run(main()) == ("released", 100)


def test_awaiting_a_failed_ask_raises_its_exception(sched: Scheduler) -> None:
    """Awaiting the future of a failing ask raises the handler's exception."""
    ref = Slow.start(threading.Event(), actor_scheduler=sched)

    async def main() -> Any:
        return await ref.ask("fail", block=False)

    with pytest.raises(ValueError, match="handler failed"):
        asyncio.run(main())


def test_awaiting_proxy_calls_and_gathering_them(sched: Scheduler) -> None:
    """Proxy call futures can be awaited one by one or gathered."""
    proxy = Slow.start(threading.Event(), actor_scheduler=sched).proxy()

    async def main() -> tuple[int, list[int]]:
        one = await proxy.double(4)
        many = await asyncio.gather(*(_await(proxy.double(i)) for i in range(5)))
        return one, list(many)

    assert asyncio.run(main()) == (8, [0, 2, 4, 6, 8])


async def _await(future: MNFuture[Any]) -> Any:
    return await future


def test_awaiting_a_done_future_returns_at_once() -> None:
    """A future that already holds a value is awaited without suspending."""
    future: MNFuture[int] = MNFuture()
    future.set(7)
    coro = _await(future)
    with pytest.raises(StopIteration) as stop:
        coro.send(None)
    assert stop.value.value == 7


def test_awaiting_hooked_futures_uses_the_executor(sched: Scheduler) -> None:
    """``map`` and ``ActorRef.stop`` futures (get hooks) are awaitable too."""
    ref = Slow.start(threading.Event(), actor_scheduler=sched)

    async def main() -> tuple[Any, Any]:
        mapped = await ref.ask(20, block=False).map(lambda v: v + 1)
        stopped = await ref.stop(block=False)
        return mapped, stopped

    assert asyncio.run(main()) == (21, True)


def test_a_cancelled_await_leaves_the_setter_unharmed() -> None:
    """Cancelling the awaiting task, then setting the future, raises nothing in the setter."""
    future: MNFuture[int] = MNFuture()

    async def main() -> bool:
        task = asyncio.create_task(_await(future))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        future.set(1)
        await asyncio.sleep(0)
        return task.cancelled()

    assert asyncio.run(main()) is True
    assert future.get(timeout=0) == 1


def test_every_task_awaiting_one_future_wakes_with_its_value() -> None:
    """Tasks awaiting the same future all get its value, set from another thread or the loop."""

    async def main() -> tuple[list[int], list[int]]:
        far: MNFuture[int] = MNFuture()
        near: MNFuture[int] = MNFuture()
        waiting = [asyncio.create_task(_await(far)) for _ in range(3)]
        nearby = [asyncio.create_task(_await(near)) for _ in range(2)]
        await asyncio.sleep(0)  # every task is now suspended on its future
        setter = threading.Thread(target=far.set, args=(5,))
        setter.start()
        near.set(6)
        results = await asyncio.wait_for(asyncio.gather(*waiting), WAIT)
        setter.join(WAIT)
        return results, await asyncio.wait_for(asyncio.gather(*nearby), WAIT)

    assert asyncio.run(main()) == ([5, 5, 5], [6, 6])


def test_setting_after_the_loop_closed_raises_nothing() -> None:
    """A future whose awaiting loop has closed can still be set from another thread."""
    future: MNFuture[int] = MNFuture()
    loop = asyncio.new_event_loop()
    task = loop.create_task(_await(future))
    loop.run_until_complete(asyncio.sleep(0))
    task.cancel()
    loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
    loop.close()
    future.set(3)
    assert future.get(timeout=0) == 3


def test_get_wakes_every_thread_waiting() -> None:
    """Several threads blocked in ``get`` all receive the value once it is set."""
    future: MNFuture[str] = MNFuture()
    results: queue.Queue[str] = queue.Queue()
    started = threading.Barrier(5)

    def wait() -> None:
        started.wait(WAIT)
        results.put(future.get(timeout=WAIT))

    threads = [threading.Thread(target=wait) for _ in range(4)]
    for thread in threads:
        thread.start()
    started.wait(WAIT)
    future.set("v")
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive()
    assert [results.get(timeout=WAIT) for _ in range(4)] == ["v"] * 4


def test_get_times_out_and_can_be_retried() -> None:
    """``get`` raises ``pykka.Timeout`` when nothing is set, and returns once something is."""
    future: MNFuture[int] = MNFuture()
    with pytest.raises(pykka.Timeout):
        future.get(timeout=0.01)
    with pytest.raises(pykka.Timeout):
        future.get(timeout=0)
    assert not future.done()
    future.set(5)
    assert future.done()
    assert future.get(timeout=0) == 5
    assert future.get() == 5


def test_set_exception_keeps_the_current_exception() -> None:
    """``set_exception()`` inside an ``except`` block stores that exception for ``get``."""
    future: MNFuture[int] = MNFuture()
    try:
        raise KeyError("missing")
    except KeyError:
        future.set_exception()
    with pytest.raises(KeyError, match="missing"):
        future.get(timeout=0)


def test_set_exception_accepts_a_bare_type() -> None:
    """An exc_info with a type and no value raises a fresh instance of that type."""
    future: MNFuture[int] = MNFuture()
    future.set_exception((RuntimeError, None, None))
    with pytest.raises(RuntimeError):
        future.get(timeout=0)


def test_a_future_is_set_only_once() -> None:
    """Setting a value, exception or hook on a set future raises ``queue.Full``."""
    future: MNFuture[int] = MNFuture()
    future.set(1)
    with pytest.raises(queue.Full):
        future.set(2)
    with pytest.raises(queue.Full):
        future.set_exception((ValueError, ValueError("x"), None))
    with pytest.raises(queue.Full):
        future.set_get_hook(lambda timeout: 3)
    hooked: MNFuture[int] = MNFuture()
    hooked.set_get_hook(lambda timeout: 3)
    with pytest.raises(queue.Full):
        hooked.set(4)
    assert (future.get(), hooked.get()) == (1, 3)


def test_done_callbacks_run_once_set_or_at_once_if_done() -> None:
    """A done callback runs when the future is set, or immediately if it already is."""
    future: MNFuture[int] = MNFuture()
    calls: list[tuple[str, MNFuture[int]]] = []
    future.add_done_callback(lambda f: calls.append(("early", f)))
    assert calls == []
    future.set(1)
    future.add_done_callback(lambda f: calls.append(("late", f)))
    assert calls == [("early", future), ("late", future)]


def test_a_failing_done_callback_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    """An exception in a done callback is logged and the other callbacks still run."""
    future: MNFuture[int] = MNFuture()
    calls: list[int] = []

    def boom(_: MNFuture[int]) -> None:
        raise RuntimeError("callback failed")

    future.add_done_callback(boom)
    future.add_done_callback(lambda f: calls.append(f.get()))
    with captured_logs(caplog, "praxo_actors") as logs:
        future.set(9)
    assert calls == [9]
    assert [entry["event"] for entry in logs] == ["future.callback_failed"]


def test_hooked_futures_refuse_done_callbacks() -> None:
    """A future made by a get hook has no completion event to call back on."""
    future: MNFuture[int] = MNFuture()
    future.set_get_hook(lambda timeout: 1)
    with pytest.raises(TypeError):
        future.add_done_callback(lambda f: None)


def test_pykka_combinators_work_on_mn_futures() -> None:
    """``join``, ``map``, ``filter``, ``reduce`` and ``pykka.get_all`` accept MNFutures."""
    a: pykka.Future[Iterable[int]] = MNFuture()
    b: pykka.Future[Iterable[int]] = MNFuture()
    joined = a.join(b)
    total = a.reduce(lambda x, y: x + y)
    big = a.filter(lambda x: x > 1)
    a.set([1, 2, 3])
    b.set([4])
    assert isinstance(joined, MNFuture)
    assert joined.get(timeout=WAIT) == [[1, 2, 3], [4]]
    assert total.get(timeout=WAIT) == 6
    assert list(big.get(timeout=WAIT)) == [2, 3]
    assert list(pykka.get_all([a, b], timeout=WAIT)) == [[1, 2, 3], [4]]


def test_exceptions_keep_their_traceback() -> None:
    """The exception raised by ``get`` carries the traceback it was set with."""
    future: MNFuture[int] = MNFuture()
    try:
        raise ValueError("deep")
    except ValueError:
        exc_info = sys.exc_info()
    future.set_exception(exc_info)
    with pytest.raises(ValueError) as caught:
        future.get(timeout=0)
    chain = []
    tb = caught.value.__traceback__
    while tb is not None:
        chain.append(tb)
        tb = tb.tb_next
    assert exc_info[2] in chain
