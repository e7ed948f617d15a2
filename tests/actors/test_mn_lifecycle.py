"""Scheduler lifecycles: threads that retire, actors left on a closed scheduler, the loop."""

from __future__ import annotations

import asyncio
import threading

import pykka
import pytest
from _helpers import assert_no_new_threads

from praxo_actors import PraxoError
from praxo_actors.actors import LoopScheduler, MNActor, Scheduler

WAIT = 10.0


class Echo(MNActor):
    """Answers every message with itself and records the thread that ran it."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[str] = set()

    def on_receive(self, message: object) -> object:
        self.threads.add(threading.current_thread().name)
        return message


def test_a_scheduler_nobody_shuts_down_keeps_no_threads() -> None:
    """Twenty start/stop cycles on schedulers never shut down leave no scheduler thread."""
    before = set(threading.enumerate())
    for i in range(20):
        ref = Echo.start(actor_scheduler=Scheduler(2, name=f"test-cycle{i}"))
        assert ref.ask("ping", timeout=WAIT) == "ping"
        ref.stop(timeout=WAIT)
    assert_no_new_threads(before, WAIT)


def test_a_scheduler_starts_its_threads_again_for_a_new_actor() -> None:
    """After its threads retired, a scheduler serves the next actor it is given."""
    sched = Scheduler(2, name="test-again")
    before = set(threading.enumerate())
    first = Echo.start(actor_scheduler=sched)
    assert first.ask(1, timeout=WAIT) == 1
    first.stop(timeout=WAIT)
    assert_no_new_threads(before, WAIT)
    second = Echo.start(actor_scheduler=sched)
    assert second.ask(2, timeout=WAIT) == 2
    sched.shutdown(timeout=WAIT)
    assert not second.is_alive()


class _Unregistered(Echo):
    actor_registered = False


def test_an_actor_left_on_a_shut_down_scheduler_is_dead() -> None:
    """An actor its owner never stopped is dead once its scheduler shuts down: asks raise."""
    sched = Scheduler(1, name="test-left")
    ref = _Unregistered.start(actor_scheduler=sched)  # not in Pykka's registry: not stopped
    assert ref.ask("hi", timeout=WAIT) == "hi"
    sched.shutdown(timeout=WAIT)
    assert not ref.is_alive()
    with pytest.raises(pykka.ActorDeadError):
        ref.ask("again", timeout=WAIT)
    with pytest.raises(pykka.ActorDeadError):
        ref.tell("again")
    assert ref.stop(timeout=WAIT) is False


def test_actors_run_on_the_loop_of_a_loop_scheduler() -> None:
    """A LoopScheduler runs its actors' turns on the loop's thread; asks from other threads work."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        sched = LoopScheduler(loop, threading.get_ident(), name="test-loop")
        refs = [Echo.start(actor_scheduler=sched) for _ in range(300)]
        replies = await asyncio.gather(*(ref.ask(i, block=False) for i, ref in enumerate(refs)))
        assert replies == list(range(300))

        def from_a_thread() -> object:
            return refs[0].ask("x", timeout=WAIT)

        assert await asyncio.to_thread(from_a_thread) == "x"
        assert await refs[0].proxy().threads == {threading.current_thread().name}
        assert sched.live == 300
        sched.shutdown()
        assert not any(ref.is_alive() for ref in refs)
        with pytest.raises(PraxoError) as info:
            Echo.start(actor_scheduler=sched)
        assert info.value.code == "RUNTIME_SCHEDULER_CLOSED"

    asyncio.run(main())
