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


class Relay(MNActor):
    """Tells every message on to ``target``, then answers it."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target

    def on_receive(self, message: object) -> object:
        self.target.tell(message)
        return message


class Inbox(MNActor):
    """Keeps what it is told; ``got`` is set at the first message."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[object] = []
        self.got = threading.Event()

    def on_receive(self, message: object) -> object:
        if message == "seen":
            return list(self.seen)
        self.seen.append(message)
        self.got.set()
        return None


def test_run_after_runs_what_its_call_made_ready_and_schedules_no_drain() -> None:
    """run_after returns the call's value with the told actor's turn done, no drain
    callback scheduled on the way, and a put from inside that turn is run by the same drain."""
    loop = RecordingLoop("_drain")

    async def main() -> tuple[str, list[object], int]:
        sched = LoopScheduler(loop, threading.get_ident(), name="test-after")
        inbox = Inbox.start(actor_scheduler=sched)
        relay = Relay.start(inbox, actor_scheduler=sched)
        try:
            assert await asyncio.wait_for(relay.ask("started", block=False), WAIT) == "started"
            assert await asyncio.wait_for(inbox.ask("seen", block=False), WAIT) == ["started"]
            loop.handles.clear()
            value = sched.run_after(lambda: (relay.tell("hi"), "told")[1])
            scheduled = len(loop.handles)  # by run_after's call and the turns it ran
            seen = inbox.ask("seen", block=False)
            return value, await asyncio.wait_for(seen, WAIT), scheduled
        finally:
            await asyncio.wait_for(relay.stop(block=False), WAIT)
            await asyncio.wait_for(inbox.stop(block=False), WAIT)
            sched.shutdown()

    try:
        value, seen, scheduled = loop.run_until_complete(main())
    finally:
        loop.close()
    assert value == "told" and seen == ["started", "hi"] and scheduled == 0


def test_run_after_whose_call_raises_still_runs_the_actors_it_told() -> None:
    """A call that raises after telling an actor: the exception propagates, and the actor
    still gets its message, in a drain scheduled as usual."""

    async def main() -> list[object]:
        loop = asyncio.get_running_loop()
        sched = LoopScheduler(loop, threading.get_ident(), name="test-after-raise")
        inbox = Inbox.start(actor_scheduler=sched)

        def tell_then_fail() -> None:
            inbox.tell("kept")
            raise ValueError("after the tell")

        try:
            try:
                sched.run_after(tell_then_fail)
            except ValueError as exc:
                assert str(exc) == "after the tell"
            else:
                raise AssertionError("run_after swallowed the exception")
            return list(await asyncio.wait_for(inbox.ask("seen", block=False), WAIT))
        finally:
            await asyncio.wait_for(inbox.stop(block=False), WAIT)
            sched.shutdown()

    assert asyncio.run(main()) == ["kept"]


def test_run_after_from_another_thread_is_the_plain_call() -> None:
    """Off the loop's thread run_after only calls; the told actor runs in the loop's drain."""

    async def main() -> list[object]:
        loop = asyncio.get_running_loop()
        sched = LoopScheduler(loop, threading.get_ident(), name="test-after-thread")
        inbox = Inbox.start(actor_scheduler=sched)
        try:
            value = await asyncio.to_thread(sched.run_after, inbox.tell, "from a thread")
            assert value is None
            return list(await asyncio.wait_for(inbox.ask("seen", block=False), WAIT))
        finally:
            await asyncio.wait_for(inbox.stop(block=False), WAIT)
            sched.shutdown()

    assert asyncio.run(main()) == ["from a thread"]


def test_a_put_from_a_turn_of_a_drain_out_of_turns_still_runs() -> None:
    """With one turn per drain, the actor a turn tells runs in the next drain."""

    async def main() -> list[object]:
        loop = asyncio.get_running_loop()
        sched = LoopScheduler(loop, threading.get_ident(), name="test-one-turn", turns=1)
        inbox = Inbox.start(actor_scheduler=sched)
        relay = Relay.start(inbox, actor_scheduler=sched)
        try:
            for i in range(5):
                assert await asyncio.wait_for(relay.ask(i, block=False), WAIT) == i
            await asyncio.wait_for(relay.ask("last", block=False), WAIT)
            return list(await asyncio.wait_for(inbox.ask("seen", block=False), WAIT))
        finally:
            await asyncio.wait_for(relay.stop(block=False), WAIT)
            await asyncio.wait_for(inbox.stop(block=False), WAIT)
            sched.shutdown()

    assert asyncio.run(main()) == [0, 1, 2, 3, 4, "last"]
