"""A live session's memory estimate: the encoded size of the messages it holds.

The messages are what a session actor keeps that grows (the agent's options are shared); their
JSON size is a lower bound on what they take in the process. Sizes are cached by session and
message count, so a page that polls an idle session asks for its history once.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import msgspec

from praxo_actors._errors import PraxoError

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime, SessionInfo

__all__ = ["MemoryEstimates"]

_CACHED = 10_000  # sessions whose size is remembered
_AT_ONCE = 16  # histories read at the same time
_encoder = msgspec.json.Encoder()


class MemoryEstimates:
    """Estimate the memory of live sessions (used from the app's event loop only)."""

    def __init__(self, runtime: Runtime, timeout: float) -> None:
        self._runtime = runtime
        self._timeout = timeout
        self._sizes: OrderedDict[tuple[str, int], int] = OrderedDict()

    async def estimate(self, infos: list[SessionInfo]) -> list[int | None]:
        """Return each session's estimate in bytes (None unless it is live)."""
        gate = asyncio.Semaphore(_AT_ONCE)

        async def one(info: SessionInfo) -> int | None:
            if info.state != "live" or info.agent is None:
                return None
            key = (info.id, info.messages)
            size = self._sizes.get(key)
            if size is not None:
                return size
            async with gate:
                try:
                    handle = self._runtime.session(info.id, agent=info.agent)
                    messages: Any = await handle.ahistory(self._timeout)
                except PraxoError:
                    return None  # stopped or unregistered meanwhile: nothing to estimate
            size = len(_encoder.encode(messages))
            self._sizes[key] = size
            if len(self._sizes) > _CACHED:
                self._sizes.popitem(last=False)
            return size

        return list(await asyncio.gather(*(one(info) for info in infos)))
