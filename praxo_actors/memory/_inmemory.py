"""A memory store kept in a dict: fast, thread-safe, and gone when the process ends."""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterator

from praxo_actors.memory._base import Clock, Namespace, StoreBase, _Row

__all__ = ["InMemoryStore"]

# A row is one bytes object: created_ns and updated_ns as two signed 64-bit ints, then the
# document's UTF-8 text. ~50 bytes of overhead a row, where a (text, created, updated) tuple
# took ~145: a session's log is three rows, kept for every session the process has seen.
_STAMPS = struct.Struct("<qq")
_HEAD = _STAMPS.size
# A stamp outside 64 bits (only a user's clock could give one) keeps the row as a tuple.
_Stored = bytes | tuple[str, int, int]


def _pack(text: str, created: int, updated: int) -> _Stored:
    try:
        return _STAMPS.pack(created, updated) + text.encode("utf-8", "surrogatepass")
    except struct.error:
        return (text, created, updated)


def _unpack(stored: _Stored) -> tuple[str, int, int]:
    if isinstance(stored, tuple):
        return stored
    created, updated = _STAMPS.unpack_from(stored)
    return stored[_HEAD:].decode("utf-8", "surrogatepass"), created, updated


def _created(stored: _Stored) -> int:
    if isinstance(stored, tuple):
        return stored[1]
    created: int = _STAMPS.unpack_from(stored)[0]
    return created


class InMemoryStore(StoreBase):
    """Keep documents in process memory, as canonical JSON text (so every read is a copy).

    Args:
        clock: Source of the ``created_ns``/``updated_ns`` stamps (default ``time.time_ns``).
    """

    def __init__(self, clock: Clock | None = None) -> None:
        super().__init__(clock)
        # One packed bytes object per key (see _pack): untracked by the collector, where a
        # _Row (a tuple subclass) is tracked for good.
        self._data: dict[Namespace, dict[str, _Stored]] = {}

    def _write(self, namespace: Namespace, key: str, text: str, now_ns: int) -> None:
        rows = self._data.setdefault(namespace, {})
        old = rows.get(key)
        created = now_ns if old is None else _created(old)
        rows[key] = _pack(text, created, max(now_ns, created))

    def _read(self, namespace: Namespace, key: str) -> _Row | None:
        rows = self._data.get(namespace)
        found = None if rows is None else rows.get(key)
        return None if found is None else _Row(namespace, key, *_unpack(found))

    def _remove(self, namespace: Namespace, key: str) -> bool:
        rows = self._data.get(namespace)
        if rows is None or rows.pop(key, None) is None:
            return False
        if not rows:
            del self._data[namespace]
        return True

    def _scan(self, prefix: Namespace, offset: int, limit: int | None) -> Iterator[_Row]:
        rows = (
            _Row(ns, key, *_unpack(self._data[ns][key]))
            for ns in self._namespaces(prefix)
            for key in sorted(self._data[ns])
        )
        return itertools.islice(rows, offset, None if limit is None else offset + limit)

    def _namespaces(self, prefix: Namespace) -> list[Namespace]:
        depth = len(prefix)
        return sorted(ns for ns in self._data if ns[:depth] == prefix)

    def _close(self) -> None:
        self._data.clear()
