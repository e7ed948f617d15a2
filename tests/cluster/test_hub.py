"""The cluster's hub on its own (no Ray): a take with nothing new waits for the next push."""

from __future__ import annotations

import asyncio

from praxo_actors.cluster._hub import Hub


def test_a_waiting_take_answers_at_the_next_push() -> None:
    async def main() -> None:
        hub = Hub()
        assert await hub.take(0) == (0, [])  # no wait: answers at once
        waiting = asyncio.ensure_future(hub.take(0, 10, wait=60.0))
        await asyncio.sleep(0)  # the take is now waiting at the hub
        assert not waiting.done()
        await hub.push([b"a", b"b"])
        assert await asyncio.wait_for(waiting, 10) == (2, [b"a", b"b"])
        # A take behind the log answers at once, without waiting.
        assert await asyncio.wait_for(hub.take(1, 10, wait=60.0), 10) == (2, [b"b"])

    asyncio.run(main())


def test_a_take_with_nothing_new_ends_after_its_wait() -> None:
    async def main() -> None:
        hub = Hub()
        await hub.push([b"a"])
        assert await asyncio.wait_for(hub.take(1, 10, wait=0.01), 10) == (1, [])

    asyncio.run(main())
