"""The cluster's hub: the agents every host registers (a restarted host reads them again) and
the event stream the hosts publish to, read by subscribers in the caller's process."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

__all__ = ["Hub"]

KEPT_EVENTS = 100_000


class Hub:
    """A Ray actor (made one by ``ray.remote`` at start): agents and a bounded event log.

    Its event methods are ``async``, so they all run on the actor's event loop: a ``take``
    with nothing new waits there for the next ``push`` instead of being asked again.
    """

    def __init__(self) -> None:
        self.agents: dict[str, tuple[Any, bool, bool]] = {}
        self.events: list[bytes] = []
        self.first = 0  # the cursor of events[0]
        self.dropped = 0
        self._pushed: asyncio.Event | None = None  # made on the actor's loop by a take
        self.hosts: dict[str, Any] = {}  # the hosts by name (their handles), for a fire's route

    def register(self, name: str, factory: Any, per_session: bool, durable: bool) -> None:
        self.agents[name] = (factory, per_session, durable)

    def agent_specs(self) -> dict[str, tuple[Any, bool, bool]]:
        return dict(self.agents)

    def set_hosts(self, hosts: dict[str, Any]) -> None:
        self.hosts = dict(hosts)

    def host_handles(self) -> dict[str, Any]:
        return dict(self.hosts)

    async def push(self, batch: list[bytes]) -> None:
        self.events.extend(batch)
        if self._pushed is not None:
            self._pushed.set()
        excess = len(self.events) - KEPT_EVENTS
        if excess > 0:
            del self.events[:excess]
            self.first += excess
            self.dropped += excess

    async def take(
        self, cursor: int, limit: int = 10_000, wait: float = 0.0
    ) -> tuple[int, list[bytes]]:
        """Events from ``cursor`` on (skipping any already dropped); the next cursor.

        With none yet, wait up to ``wait`` seconds for the next push.
        """
        if wait > 0 and cursor >= self.first + len(self.events):
            if self._pushed is None:
                self._pushed = asyncio.Event()
            self._pushed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._pushed.wait(), wait)
        start = max(cursor, self.first) - self.first
        batch = self.events[start : start + limit]
        return self.first + start + len(batch), batch
