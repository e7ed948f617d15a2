"""``EventStream``: a streamed answer that stops when its client leaves, called as ASGI."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from starlette.background import BackgroundTask

from praxo_actors.protocols._http import EventStream

TIMEOUT = 10.0
SCOPE = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "method": "GET"}


def test_a_whole_stream_is_sent_and_leaves_its_caller_uncancelled() -> None:
    """Every chunk is sent, then the end; the request's task goes on uncancelled after."""
    sent: list[dict[str, Any]] = []
    background: list[str] = []

    async def chunks() -> AsyncIterator[bytes]:
        for part in (b"one", b"two"):
            yield part

    async def go() -> int:
        done = asyncio.Event()

        async def receive() -> dict[str, Any]:
            await done.wait()  # the client leaves once the answer is whole
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if message["type"] == "http.response.body" and not message["more_body"]:
                done.set()

        async def later() -> None:
            background.append("ran")

        response = EventStream(chunks(), background=BackgroundTask(later))
        await asyncio.wait_for(response(dict(SCOPE), receive, send), TIMEOUT)
        await asyncio.sleep(0)  # a yield: a cancellation left pending would be raised here
        task = asyncio.current_task()
        assert task is not None
        return task.cancelling()

    assert asyncio.run(go()) == 0
    bodies = [m["body"] for m in sent if m["type"] == "http.response.body"]
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    assert bodies == [b"one", b"two", b""]
    assert background == ["ran"]


def test_a_client_that_leaves_ends_the_stream_quietly() -> None:
    """A disconnect mid-stream closes the generator (its ``finally`` runs) and the call
    returns without raising."""
    events: list[str] = []

    async def go() -> None:
        first_sent = asyncio.Event()

        async def chunks() -> AsyncIterator[bytes]:
            try:
                yield b"first"
                await asyncio.Event().wait()  # only the client's leaving ends this
                yield b"never"
            finally:
                events.append("closed")

        async def receive() -> dict[str, Any]:
            await first_sent.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message.get("body") == b"first":
                first_sent.set()

        await asyncio.wait_for(EventStream(chunks())(dict(SCOPE), receive, send), TIMEOUT)
        events.append("returned")

    asyncio.run(go())
    assert events == ["closed", "returned"]
