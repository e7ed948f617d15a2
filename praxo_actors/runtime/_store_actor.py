"""The memory store actor: the one writer of session checkpoints.

All checkpoint writes and reads go through this actor's mailbox, so for any session a read
(a session being restored) sees every write sent before it (a session's earlier runs).

Where it runs depends on the store. A store whose calls block (SQLite's fsync, any store of
yours) gets a :class:`StoreActor`, a ``ThreadingActor``: its calls block only its own thread.
The in-memory store never blocks, so it gets a :class:`LoopStoreActor`, an M:N actor on the
runtime's event loop: a run on it then completes without leaving the loop thread.

Writes are group-committed: a :class:`SaveCheckpoint` is gathered, and the first one of a burst
sends the actor a :class:`FlushCheckpoints` message, which therefore arrives after every save
already queued and writes them all in one transaction (with SQLite's ``synchronous=FULL``, one
fsync of ~3 ms for the burst instead of one per run). A run's future completes only after the
flush that holds its checkpoint. Both kinds answer asks with an
:class:`~praxo_actors.runtime.MNFuture`, so the router can take a reply as a callback instead
of a waiting thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pykka

from praxo_actors._errors import PraxoError
from praxo_actors._log import get_logger
from praxo_actors.runtime._futures import MNFuture
from praxo_actors.runtime._mn import MNActor
from praxo_actors.runtime._protocol import (
    Checkpoints,
    FlushCheckpoints,
    LoadCheckpoint,
    LoadCheckpoints,
    SaveCheckpoint,
    decode,
    encode,
)

__all__ = ["CHECKPOINT_NAMESPACE", "LoopStoreActor", "StoreActor"]

CHECKPOINT_NAMESPACE = ("praxo", "sessions")
"""The memory-store namespace that holds one checkpoint document per session id."""

logger = get_logger("praxo_actors.runtime")

_FLUSH = encode(FlushCheckpoints())

Saved = Callable[[list[str | None], str | None], None]


class _StoreLogic:
    """The behaviour both store actors share (``on_receive``, flushes, failure hooks)."""

    actor_ref: pykka.ActorRef[Any]

    def __init__(self, store: Any, on_saved: Saved) -> None:
        super().__init__()
        self.store = store
        self._on_saved = on_saved
        # session id -> latest document; run ids in arrival order (a session may save twice).
        self._gathered: dict[str, str] = {}
        self._runs: list[str | None] = []
        self.saves = 0
        self.flushes = 0

    @staticmethod
    def _create_future() -> pykka.Future[Any]:
        return MNFuture()

    def on_receive(self, message: Any) -> Any:
        """Handle saves (tell), flushes, and checkpoint loads (ask)."""
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
                return self._load([sid])[0]
            case LoadCheckpoints(session_ids=ids):
                return encode(Checkpoints(self._load(ids)))
            case other:
                raise PraxoError(
                    "PROTOCOL_INVALID_MESSAGE", f"store actor got {type(other).__name__}"
                )

    def _load(self, ids: list[str]) -> list[str | None]:
        gathered = self._gathered
        missing = [sid for sid in ids if sid not in gathered]
        found: dict[str, str | None] = {}
        if missing:
            get_many = getattr(self.store, "get_many", None)
            if get_many is not None:
                items = get_many(CHECKPOINT_NAMESPACE, missing)
            else:
                items = [self.store.get(CHECKPOINT_NAMESPACE, sid) for sid in missing]
            for sid, item in zip(missing, items, strict=True):
                document = None if item is None else item.value.get("checkpoint")
                found[sid] = document if isinstance(document, str) else None
        return [gathered[sid] if sid in gathered else found[sid] for sid in ids]

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
        self._on_saved(runs, error)

    def on_failure(self, *_exc_info: Any) -> None:
        """Fail the runs whose checkpoints were gathered but not written (this actor crashed)."""
        runs, self._runs, self._gathered = self._runs, [], {}
        if runs:
            self._on_saved(runs, "STORE_FAILED")

    def on_stop(self) -> None:
        """Write what is gathered (the runtime closes a store it opened, after the tree)."""
        self._flush()


class StoreActor(_StoreLogic, pykka.ThreadingActor):
    """Own a memory store whose calls may block, on a thread of its own.

    Args:
        store: A memory store (``SQLiteStore`` or one with the same API).
        on_saved: Called on this actor's thread after each flush with the run ids it held and
            an error code (None on success).
    """

    use_daemon_thread = True  # never keeps a process alive: the runtime stops at exit


class LoopStoreActor(_StoreLogic, MNActor):
    """Own a memory store whose calls never block (``InMemoryStore``), on the event loop."""

    actor_registered = False
