"""A session's order across Ray on its own (no Ray): the caller numbers runs, a host holds a
run until the one it follows is queued, for a bounded time."""

from __future__ import annotations

import asyncio
import gc

from praxo_actors.cluster._order import Sent, Turns


class Future:
    """A run's future as ``Sent`` sees it: settled or not."""

    def __init__(self, settled: bool = False) -> None:
        self.done = settled

    def settled(self) -> bool:
        return self.done


def test_a_run_follows_the_one_in_flight_to_the_same_host() -> None:
    """Numbers grow; a run names the session's previous one only while that is in flight at
    the same host."""
    sent = Sent()
    first, second, third, other = Future(), Future(), Future(), Future()
    n1, after1 = sent.send("s", "host-0", first)
    n2, after2 = sent.send("s", "host-0", second)
    assert after1 is None and (n2, after2) == (n1 + 1, n1)
    n3, after3 = sent.send("t", "host-0", other)  # another session: its own order
    assert n3 > n2 and after3 is None
    second.done = True
    n4, after4 = sent.send("s", "host-0", third)
    assert n4 > n3 and after4 is None  # the previous one returned: nothing to wait for
    n5, after5 = sent.send("s", "host-1", Future())
    assert n5 > n4
    assert after5 is None  # another host: the previous one is not coming there


def test_a_session_stays_on_the_host_of_its_run_in_flight() -> None:
    """While a session's last run is in flight its host is pinned (a run sent elsewhere could
    commit first); once that run returned, the session may move."""
    sent = Sent()
    assert sent.pinned("s") is None
    first = Future()
    sent.send("s", "host-0", first)
    assert sent.pinned("s") == "host-0" and sent.pinned("t") is None
    second = Future()
    sent.send("s", "host-0", second)
    first.done = True
    assert sent.pinned("s") == "host-0"  # the last one sent is still in flight
    second.done = True
    assert sent.pinned("s") is None


def test_a_run_is_sent_again_only_while_it_is_the_last() -> None:
    """A run sent again after a later one was sent would commit after it: refused."""
    sent = Sent()
    first = Future()
    number, _ = sent.send("s", "host-0", first)
    first.done = True
    again = sent.send_again("s", "host-1", first, number)
    assert again is not None and again[0] > number and again[1] is None
    later = Future()
    sent.send("s", "host-1", later)
    assert sent.send_again("s", "host-2", first, again[0]) is None


def test_an_entry_goes_with_its_future() -> None:
    """Nothing is kept for a session once its last future is collected."""
    sent = Sent()
    future = Future()
    sent.send("s", "host-0", future)
    assert len(sent) == 1
    del future
    gc.collect()
    assert len(sent) == 0
    assert sent.send_again("s", "host-0", Future(), 0) is None


def test_a_run_waits_for_its_turn() -> None:
    """A run held for the one it follows goes on when that one is queued."""

    async def main() -> None:
        turns = Turns()
        waiting = asyncio.ensure_future(turns.wait("s", 4, timeout=60))
        await asyncio.sleep(0)  # the run now waits at the host
        turns.queued("s", 3)
        await asyncio.sleep(0)
        assert not waiting.done()
        turns.queued("t", 4)  # another session's number: not its turn
        await asyncio.sleep(0)
        assert not waiting.done()
        turns.queued("s", 4)
        assert await asyncio.wait_for(waiting, 10) is True
        assert await asyncio.wait_for(turns.wait("s", 2, timeout=60), 10) is True  # past

    asyncio.run(main())


def test_a_run_whose_predecessor_never_comes_goes_on_after_the_bound() -> None:
    """The run it follows died with another host: the wait ends at its bound, False."""

    async def main() -> None:
        turns = Turns()
        assert await turns.wait("s", 7, timeout=0.01) is False
        turns.queued("s", 8)  # no waiter left behind to wake
        assert await turns.wait("s", 7, timeout=0.01) is True

    asyncio.run(main())


def test_a_host_keeps_a_bounded_number_of_sessions() -> None:
    """The oldest sessions' numbers are dropped past the bound."""

    async def main() -> None:
        turns = Turns(kept=2)
        for sid in ("a", "b", "c"):
            turns.queued(sid, 1)
        assert await turns.wait("c", 1, timeout=0.01) is True
        assert await turns.wait("a", 1, timeout=0.01) is False  # dropped: waits its bound

    asyncio.run(main())
