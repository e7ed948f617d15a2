"""AwaitableThreadingActor: a thread of its own, and replies that asyncio can await."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pykka
import pytest

from praxo_actors.actors import AwaitableThreadingActor, MNFuture

WAIT = 10.0


class Worker(AwaitableThreadingActor):
    """Answers with the name of the thread that handled the message."""

    def on_receive(self, message: Any) -> Any:
        return threading.current_thread().name

    def thread_name(self) -> str:
        return threading.current_thread().name


@pytest.fixture
def worker() -> Iterator[pykka.ActorRef[Worker]]:
    """Start a worker; stop it after the test."""
    ref = Worker.start()
    yield ref
    ref.stop(timeout=WAIT)


def test_asks_and_proxy_calls_return_mn_futures(worker: pykka.ActorRef[Worker]) -> None:
    """Each reply is an MNFuture, answered from the actor's own thread."""
    asked = worker.ask("name", block=False)
    called = worker.proxy().thread_name()
    assert isinstance(asked, MNFuture)
    assert isinstance(called, MNFuture)
    name = asked.get(timeout=WAIT)
    assert name == called.get(timeout=WAIT)
    assert name != threading.current_thread().name


def test_a_reply_is_awaited_without_blocking_the_loop(worker: pykka.ActorRef[Worker]) -> None:
    """Awaiting a reply lets other tasks of the loop run meanwhile."""

    async def main() -> tuple[str, int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        ticker = asyncio.create_task(tick())
        try:
            name: str = await asyncio.wait_for(worker.ask("name", block=False), WAIT)
        finally:
            ticker.cancel()
        return name, ticks

    name, ticks = asyncio.run(main())
    assert name.startswith("Worker")
    assert ticks >= 1


def test_a_reply_can_be_taken_as_a_callback(worker: pykka.ActorRef[Worker]) -> None:
    """add_done_callback gets the settled future, with no thread waiting on it."""
    got: list[str] = []
    done = threading.Event()
    future = worker.ask("name", block=False)
    assert isinstance(future, MNFuture)
    future.add_done_callback(lambda settled: (got.append(settled.get()), done.set()))
    assert done.wait(WAIT)
    assert got == [future.get()]
