"""LoopScheduler: an eager drain leaves no redundant callback, and loses no message."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from praxo_actors.actors import LoopScheduler, MNActor

WAIT = 10.0


class Echo(MNActor):
    """Answers every message with itself."""

    def on_receive(self, message: object) -> object:
        return message


class RecordingLoop(asyncio.SelectorEventLoop):
    """An event loop that keeps every handle ``call_soon`` returned for one callback name."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.handles: list[asyncio.Handle] = []

    def call_soon(self, callback: Callable[..., object], *args: Any, **kwargs: Any) -> Any:
        handle = super().call_soon(callback, *args, **kwargs)
        if getattr(callback, "__name__", "") == self.name:
            self.handles.append(handle)
        return handle


def test_run_now_cancels_the_drain_it_made_redundant_and_later_messages_still_run() -> None:
    """A tell from the loop schedules a drain; run_now does the work and cancels that drain."""
    loop = RecordingLoop("_drain")

    async def main() -> tuple[list[bool], object, object]:
        sched = LoopScheduler(loop, threading.get_ident(), name="test-eager")
        ref = Echo.start(actor_scheduler=sched)
        try:
            assert await asyncio.wait_for(ref.ask("started", block=False), WAIT) == "started"
            loop.handles.clear()
            answer = ref.ask("now", block=False)
            assert len(loop.handles) == 1  # the put scheduled a drain
            sched.run_now()
            assert answer.done() and answer.get(timeout=0) == "now"  # handled in this step
            cancelled = [h.cancelled() for h in loop.handles]
            # Work that comes after, from the loop and from another thread, still runs.
            later = await asyncio.wait_for(ref.ask("later", block=False), WAIT)
            threaded = await asyncio.to_thread(ref.ask, "threaded", timeout=WAIT)
            return cancelled, later, threaded
        finally:
            await asyncio.wait_for(ref.stop(block=False), WAIT)
            sched.shutdown()

    try:
        assert loop.run_until_complete(main()) == ([True], "later", "threaded")
    finally:
        loop.close()


def test_a_drain_cut_short_by_its_turn_limit_schedules_the_rest() -> None:
    """With more ready actors than a drain's turns, the rest run in a later drain."""

    async def main() -> list[object]:
        loop = asyncio.get_running_loop()
        sched = LoopScheduler(loop, threading.get_ident(), name="test-turns", turns=2)
        refs = [Echo.start(actor_scheduler=sched) for _ in range(7)]
        try:
            futures = [ref.ask(i, block=False) for i, ref in enumerate(refs)]
            sched.run_now()  # two turns now; the other actors wait for the next drain
            return list(await asyncio.wait_for(asyncio.gather(*futures), WAIT))
        finally:
            await asyncio.wait_for(asyncio.gather(*(ref.stop(block=False) for ref in refs)), WAIT)
            sched.shutdown()

    assert asyncio.run(main()) == list(range(7))
