"""A memory store kept in a dict: fast, thread-safe, and gone when the process ends."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from praxo_actors.memory._base import Clock, Namespace, StoreBase, _Row

__all__ = ["InMemoryStore"]


class InMemoryStore(StoreBase):
    """Keep documents in process memory, as canonical JSON text (so every read is a copy).

    Args:
        clock: Source of the ``created_ns``/``updated_ns`` stamps (default ``time.time_ns``).
    """

    def __init__(self, clock: Clock | None = None) -> None:
        super().__init__(clock)
        # (text, created_ns, updated_ns) per key: a plain tuple of a string and two ints, which
        # the collector stops tracking, where a _Row (a tuple subclass) is tracked for good.
        self._data: dict[Namespace, dict[str, tuple[str, int, int]]] = {}

    def _write(self, namespace: Namespace, key: str, text: str, now_ns: int) -> None:
        rows = self._data.setdefault(namespace, {})
        old = rows.get(key)
        created = now_ns if old is None else old[1]
        rows[key] = (text, created, max(now_ns, created))

    def _read(self, namespace: Namespace, key: str) -> _Row | None:
        rows = self._data.get(namespace)
        found = None if rows is None else rows.get(key)
        return None if found is None else _Row(namespace, key, *found)

    def _read_texts(self, namespace: Namespace, keys: list[str]) -> list[str | None]:
        # The session log's reads (heads, pending runs): no _Row built per key only to be dropped.
        rows = self._data.get(namespace)
        if rows is None:
            return [None] * len(keys)
        found = [rows.get(key) for key in keys]
        return [None if row is None else row[0] for row in found]

    def _remove(self, namespace: Namespace, key: str) -> bool:
        rows = self._data.get(namespace)
        if rows is None or rows.pop(key, None) is None:
            return False
        if not rows:
            del self._data[namespace]
        return True

    def _scan(self, prefix: Namespace, offset: int, limit: int | None) -> Iterator[_Row]:
        rows = (
            _Row(ns, key, *self._data[ns][key])
            for ns in self._namespaces(prefix)
            for key in sorted(self._data[ns])
        )
        return itertools.islice(rows, offset, None if limit is None else offset + limit)

    def _namespaces(self, prefix: Namespace) -> list[Namespace]:
        depth = len(prefix)
        return sorted(ns for ns in self._data if ns[:depth] == prefix)

    def _close(self) -> None:
        self._data.clear()
