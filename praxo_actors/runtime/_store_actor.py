"""The memory store actor: the one writer of session checkpoints.

All checkpoint writes and reads go through this actor's mailbox, so for any session a read
(a session being restored) sees every write sent before it (a session's earlier runs). It is a
``ThreadingActor``: store calls (an fsync with SQLite) block only its own thread, never a
scheduler thread of the sessions.

Writes are group-committed: a :class:`SaveCheckpoint` is gathered, and the first one of a burst
sends the actor a :class:`FlushCheckpoints` message, which therefore arrives after every save
already queued and writes them all in one transaction (with SQLite's ``synchronous=FULL``, one
fsync of ~3 ms for the burst instead of one per run). A run's future completes only after the
flush that holds its checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pykka
import structlog

from praxo_actors._errors import PraxoError
from praxo_actors.runtime._protocol import (
    FlushCheckpoints,
    LoadCheckpoint,
    SaveCheckpoint,
    decode,
    encode,
)

__all__ = ["CHECKPOINT_NAMESPACE", "StoreActor"]

CHECKPOINT_NAMESPACE = ("praxo", "sessions")
"""The memory-store namespace that holds one checkpoint document per session id."""

logger = structlog.get_logger("praxo_actors.runtime")

_FLUSH = encode(FlushCheckpoints())


class StoreActor(pykka.ThreadingActor):
    """Own the memory store; save and load session checkpoints on request.

    Args:
        store: A memory store (``InMemoryStore``, ``SQLiteStore`` or one with the same API).
        on_saved: Called on this actor's thread after each flush, once per saved run, with
            ``(run_id, error_code)`` (``error_code`` is None on success).
    """

    def __init__(
        self,
        store: Any,
        on_saved: Callable[[str | None, str | None], None],
    ) -> None:
        super().__init__()
        self.store = store
        self._on_saved = on_saved
        # session id -> latest document; run ids in arrival order (a session may save twice).
        self._gathered: dict[str, str] = {}
        self._runs: list[str | None] = []
        self.saves = 0
        self.flushes = 0

    def on_receive(self, message: Any) -> Any:
        """Handle :class:`SaveCheckpoint` (tell), flushes, and :class:`LoadCheckpoint` (ask)."""
        match decode(message):
            case SaveCheckpoint(session_id=sid, document=document, run_id=run_id):
                if not self._runs:
                    self.actor_ref.tell(_FLUSH)
                self._gathered[sid] = document
                self._runs.append(run_id)
                return None
            case FlushCheckpoints():
                self._flush()
                return None
            case LoadCheckpoint(session_id=sid):
                if sid in self._gathered:
                    return self._gathered[sid]
                item = self.store.get(CHECKPOINT_NAMESPACE, sid)
                if item is None:
                    return None
                document = item.value.get("checkpoint")
                return document if isinstance(document, str) else None
            case other:
                raise PraxoError(
                    "PROTOCOL_INVALID_MESSAGE", f"store actor got {type(other).__name__}"
                )

    def _flush(self) -> None:
        if not self._runs:
            return
        gathered, runs = self._gathered, self._runs
        self._gathered, self._runs = {}, []
        entries = [
            (CHECKPOINT_NAMESPACE, sid, {"checkpoint": doc}) for sid, doc in gathered.items()
        ]
        error: str | None = None
        try:
            put_many = getattr(self.store, "put_many", None)
            if put_many is not None:
                put_many(entries)
            else:
                for namespace, key, value in entries:
                    self.store.put(namespace, key, value)
            self.saves += len(entries)
            self.flushes += 1
        except PraxoError as exc:
            error = exc.code
        except Exception as exc:  # a failing store must not take the runtime down
            logger.error("checkpoint_save_failed", sessions=len(entries), error=repr(exc))
            error = "STORE_FAILED"
        for run_id in runs:
            self._on_saved(run_id, error)

    def on_failure(self, *_exc_info: Any) -> None:
        """Fail the runs whose checkpoints were gathered but not written (this actor crashed)."""
        runs, self._runs, self._gathered = self._runs, [], {}
        for run_id in runs:
            self._on_saved(run_id, "STORE_FAILED")

    def on_stop(self) -> None:
        """Write what is gathered (the runtime closes a store it opened, after the tree)."""
        self._flush()
