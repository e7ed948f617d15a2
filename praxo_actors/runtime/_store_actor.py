"""The memory store actor: the one writer of session checkpoints.

All checkpoint writes and reads go through this actor's mailbox, so for any session a read
(a session being restored) sees every write sent before it (a session's earlier runs). It is a
``ThreadingActor``: store calls (an fsync with SQLite) block only its own thread, never a
scheduler thread of the sessions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pykka
import structlog

from praxo_actors._errors import PraxoError
from praxo_actors.runtime._protocol import LoadCheckpoint, SaveCheckpoint, decode

__all__ = ["CHECKPOINT_NAMESPACE", "StoreActor"]

CHECKPOINT_NAMESPACE = ("praxo", "sessions")
"""The memory-store namespace that holds one checkpoint document per session id."""

logger = structlog.get_logger("praxo_actors.runtime")


class StoreActor(pykka.ThreadingActor):
    """Own the memory store; save and load session checkpoints on request.

    Args:
        store: A memory store (``InMemoryStore``, ``SQLiteStore`` or compatible).
        on_saved: Called on this actor's thread after each save with ``(run_id, error_code)``
            (``error_code`` is None on success); the runtime completes the run's future there.
    """

    def __init__(
        self,
        store: Any,
        on_saved: Callable[[str | None, str | None], None],
        close_on_stop: bool = False,
    ) -> None:
        super().__init__()
        self.store = store
        self._close_on_stop = close_on_stop
        self._on_saved = on_saved
        self.saves = 0

    def on_receive(self, message: Any) -> Any:
        """Handle :class:`SaveCheckpoint` (tell) and :class:`LoadCheckpoint` (ask)."""
        match decode(message):
            case SaveCheckpoint(session_id=sid, document=document, run_id=run_id):
                error: str | None = None
                try:
                    self.store.put(CHECKPOINT_NAMESPACE, sid, {"checkpoint": document})
                    self.saves += 1
                except PraxoError as exc:
                    error = exc.code
                except Exception as exc:  # a failing store must not take the runtime down
                    logger.error("checkpoint_save_failed", session_id=sid, error=repr(exc))
                    error = "STORE_FAILED"
                self._on_saved(run_id, error)
                return None
            case LoadCheckpoint(session_id=sid):
                item = self.store.get(CHECKPOINT_NAMESPACE, sid)
                if item is None:
                    return None
                document = item.value.get("checkpoint")
                return document if isinstance(document, str) else None
            case other:
                raise PraxoError(
                    "PROTOCOL_INVALID_MESSAGE", f"store actor got {type(other).__name__}"
                )

    def on_stop(self) -> None:
        """Close the store if the runtime opened it."""
        close = getattr(self.store, "close", None)
        if self._close_on_stop and callable(close):
            close()
