"""What the parts of a cluster front read of the :class:`ClusterRuntime` they belong to.

A session routes by rendezvous hash of its id over the live hosts (:func:`_score`); a host that
failed a call is passed over for ``_DOWN_SECONDS``.
"""

from __future__ import annotations

import hashlib
import threading
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from praxo_actors.cluster._events import ClusterEvents

__all__ = ["ClusterCore"]

_DOWN_SECONDS = 2.0  # how long a host that failed a call is passed over before a new ping


def _score(host: str, session_id: str) -> int:
    digest = hashlib.blake2b(f"{host}\x00{session_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class ClusterCore(Protocol):
    """The hosts, the hub and the routing of a cluster front (``ClusterRuntime`` is one)."""

    _hub: Any
    _hosts: dict[str, Any]
    _down: dict[str, float]
    _lock: threading.Lock
    _durable: set[str]
    _stopped: bool
    events: ClusterEvents

    def _live(self) -> list[str]: ...

    def _route(self, session_id: str) -> tuple[str, Any]: ...
