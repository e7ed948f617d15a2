"""The store interface and the base every backend extends.

Backends implement five small hooks (``_write``, ``_read``, ``_remove``, ``_scan``,
``_namespaces``) over rows holding the value's canonical JSON text; everything users can get
wrong is checked once, by the base with the checks of :mod:`~praxo_actors.memory._values`, so
every backend accepts and refuses exactly the same calls.
"""

from __future__ import annotations

import abc
import itertools
import threading
import time
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from praxo_actors.memory._item import Item
from praxo_actors.memory._values import (
    Clock,
    Namespace,
    _check_count,
    _matches,
    _Row,
    _to_item,
    check_key,
    check_namespace,
    check_prefix,
    decode_row,
    decode_text,
    encode_value,
    json_equal,
)

# The checks, codecs and row are :mod:`~praxo_actors.memory._values`'s, named here too.
__all__ = [
    "Clock",
    "Namespace",
    "Store",
    "StoreBase",
    "_Row",
    "check_key",
    "check_namespace",
    "check_prefix",
    "decode_row",
    "decode_text",
    "encode_value",
    "json_equal",
]


@runtime_checkable
class Store(Protocol):
    """What the agent tools and the runtime need from a memory store."""

    def put(self, namespace: Sequence[str], key: str, value: dict[str, Any]) -> None:
        """Store ``value`` under ``namespace`` and ``key``, replacing what was there."""

    def get(self, namespace: Sequence[str], key: str) -> Item | None:
        """Return the item under ``namespace`` and ``key``, or None."""

    def delete(self, namespace: Sequence[str], key: str) -> bool:
        """Remove the item; return whether there was one."""

    def search(
        self,
        prefix: Sequence[str],
        filter: dict[str, Any] | None = None,
        query: str | None = None,
        limit: int = 10,
        offset: int = 0,
    ) -> list[Item]:
        """Return matching items below ``prefix``, ordered by namespace then key."""

    def list_namespaces(
        self, prefix: Sequence[str] = (), max_depth: int | None = None
    ) -> list[Namespace]:
        """Return the distinct namespaces holding items below ``prefix``, sorted."""

    def close(self) -> None:
        """Release the store's resources; later calls fail."""


class StoreBase(abc.ABC):
    """The public store API over backend hooks: validation, locking, filtering and paging.

    Every public method holds one re-entrant lock for its whole duration, so a store may be
    shared by threads. Subclasses implement the hooks, which run with that lock held.
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = time.time_ns if clock is None else clock
        self._lock = threading.RLock()
        self._closed = False
        # Counts the changes made through this object (under its lock): a writer that keeps
        # what it wrote (the session log's heads) knows from it whether anyone else wrote since.
        self._changes = 0

    def put(self, namespace: Sequence[str], key: str, value: dict[str, Any]) -> None:
        """Store a copy of ``value`` under ``namespace`` and ``key``, replacing any previous one.

        Raises:
            MemoryStoreError: ``MEMORY_INVALID_NAMESPACE``, ``MEMORY_INVALID_KEY`` or
                ``MEMORY_INVALID_VALUE``.
        """
        ns, key, text = check_namespace(namespace), check_key(key), encode_value(value)
        with self._lock:
            self._check_open()
            self._changes += 1
            self._write(ns, key, text, self._clock())

    def put_many(self, entries: Iterable[tuple[Sequence[str], str, dict[str, Any]]]) -> None:
        """Store several documents at once: all are validated first, then written together.

        A backend with transactions writes them in one (one fsync for SQLite), so nothing is
        stored when a write fails.

        Raises:
            MemoryStoreError: as :meth:`put`, for the first bad entry; nothing is written.
        """
        checked = [
            (check_namespace(ns), check_key(key), encode_value(value)) for ns, key, value in entries
        ]
        with self._lock:
            self._check_open()
            self._changes += 1
            self._write_many(checked, self._clock())

    def apply(
        self,
        puts: Iterable[tuple[Sequence[str], str, dict[str, Any]]],
        deletes: Iterable[tuple[Sequence[str], str]] = (),
    ) -> None:
        """Store ``puts`` and remove ``deletes`` together: one transaction where the backend has
        them (SQLite), so a reader sees all of it or none.

        Raises:
            MemoryStoreError: as :meth:`put` and :meth:`delete`, for the first bad entry;
                nothing is changed.
        """
        checked = [
            (check_namespace(ns), check_key(key), encode_value(value)) for ns, key, value in puts
        ]
        removed = [(check_namespace(ns), check_key(key)) for ns, key in deletes]
        with self._lock:
            self._check_open()
            self._changes += 1
            self._apply(checked, removed, self._clock())

    def get(self, namespace: Sequence[str], key: str) -> Item | None:
        """Return the item under ``namespace`` and ``key``, or None when there is none.

        Raises:
            MemoryStoreError: ``MEMORY_INVALID_NAMESPACE`` or ``MEMORY_INVALID_KEY``.
        """
        ns, key = check_namespace(namespace), check_key(key)
        with self._lock:
            self._check_open()
            row = self._read(ns, key)
        return None if row is None else _to_item(row)

    def get_many(self, namespace: Sequence[str], keys: Sequence[str]) -> list[Item | None]:
        """Return the item (or None) under each of ``keys`` in ``namespace``, in order.

        One read for all of them (one query for SQLite), so restoring a burst of sessions
        costs one store round trip.

        Raises:
            MemoryStoreError: ``MEMORY_INVALID_NAMESPACE`` or ``MEMORY_INVALID_KEY``.
        """
        ns = check_namespace(namespace)
        checked = [check_key(key) for key in keys]
        with self._lock:
            self._check_open()
            rows = self._read_many(ns, checked)
        return [None if row is None else _to_item(row) for row in rows]

    def delete(self, namespace: Sequence[str], key: str) -> bool:
        """Remove the item under ``namespace`` and ``key``; return whether it existed.

        Raises:
            MemoryStoreError: ``MEMORY_INVALID_NAMESPACE`` or ``MEMORY_INVALID_KEY``.
        """
        ns, key = check_namespace(namespace), check_key(key)
        with self._lock:
            self._check_open()
            self._changes += 1
            return self._remove(ns, key)

    def search(
        self,
        prefix: Sequence[str],
        filter: dict[str, Any] | None = None,
        query: str | None = None,
        limit: int = 10,
        offset: int = 0,
    ) -> list[Item]:
        """Return items whose namespace starts with ``prefix``, ordered by namespace then key.

        Args:
            prefix: Leading labels of the namespaces to search; ``()`` searches everything.
            filter: Top-level entries every result's value must hold (JSON equality).
            query: Text every result's canonical JSON must contain, ignoring case.
            limit: At most this many results.
            offset: Skip this many matches first.

        Raises:
            MemoryStoreError: ``MEMORY_INVALID_NAMESPACE`` for a bad prefix,
                ``MEMORY_INVALID_VALUE`` for a filter that is not a JSON object.
            TypeError: ``query`` is not a str, or ``limit``/``offset`` not an int.
            ValueError: ``limit`` or ``offset`` is negative.
        """
        labels = check_prefix(prefix)
        if filter is not None:
            encode_value(filter)
        if query is not None and not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        limit, offset = _check_count("limit", limit, 0), _check_count("offset", offset, 0)
        needle = query.casefold() if query else None
        with self._lock:
            self._check_open()
            if not filter and needle is None:
                rows = list(self._scan(labels, offset, limit))
            else:
                scan = self._scan(labels, 0, None)
                matches = (row for row in scan if _matches(row, filter, needle))
                rows = list(itertools.islice(matches, offset, offset + limit))
        return [_to_item(row) for row in rows]

    def list_namespaces(
        self, prefix: Sequence[str] = (), max_depth: int | None = None
    ) -> list[Namespace]:
        """Return the distinct namespaces holding items below ``prefix``, sorted.

        Args:
            prefix: Leading labels the namespaces must start with; ``()`` lists all.
            max_depth: Truncate each namespace to this many labels (then deduplicate).

        Raises:
            MemoryStoreError: ``MEMORY_INVALID_NAMESPACE`` for a bad prefix.
            TypeError: ``max_depth`` is not an int.
            ValueError: ``max_depth`` is less than 1.
        """
        labels = check_prefix(prefix)
        depth = None if max_depth is None else _check_count("max_depth", max_depth, 1)
        with self._lock:
            self._check_open()
            found = list(self._namespaces(labels))
        if depth is None:
            return found
        # Sorted input stays sorted under truncation, so equal neighbours are the duplicates.
        result: list[Namespace] = []
        for ns in found:
            cut = ns[:depth]
            if not result or result[-1] != cut:
                result.append(cut)
        return result

    def close(self) -> None:
        """Release the store; later calls raise ValueError. Closing twice is harmless."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"{type(self).__name__} is closed")

    def _write_many(self, rows: list[tuple[Namespace, str, str]], now_ns: int) -> None:
        """Write several rows; a backend with transactions makes it one."""
        for namespace, key, text in rows:
            self._write(namespace, key, text, now_ns)

    def _apply(
        self,
        rows: list[tuple[Namespace, str, str]],
        deletes: list[tuple[Namespace, str]],
        now_ns: int,
    ) -> None:
        """Write rows and remove others; a backend with transactions makes it one."""
        if rows:
            self._write_many(rows, now_ns)
        for namespace, key in deletes:
            self._remove(namespace, key)

    def _read_many(self, namespace: Namespace, keys: list[str]) -> list[_Row | None]:
        """Return one row (or None) per key; a backend with queries makes it one."""
        return [self._read(namespace, key) for key in keys]

    def _read_texts(self, namespace: Namespace, keys: list[str]) -> list[str | None]:
        """Return the stored text (or None) per key: a read that needs no stamps."""
        return [None if row is None else row.text for row in self._read_many(namespace, keys)]

    @abc.abstractmethod
    def _write(self, namespace: Namespace, key: str, text: str, now_ns: int) -> None:
        """Insert or replace a row; keep ``created_ns`` and make ``updated_ns >= created_ns``."""

    @abc.abstractmethod
    def _read(self, namespace: Namespace, key: str) -> _Row | None:
        """Return one row, or None."""

    @abc.abstractmethod
    def _remove(self, namespace: Namespace, key: str) -> bool:
        """Delete one row; return whether it existed."""

    @abc.abstractmethod
    def _scan(self, prefix: Namespace, offset: int, limit: int | None) -> Iterable[_Row]:
        """Yield the rows below ``prefix`` in (namespace, key) order, paged by offset/limit."""

    @abc.abstractmethod
    def _namespaces(self, prefix: Namespace) -> Iterable[Namespace]:
        """Yield the distinct namespaces below ``prefix`` that hold rows, in order."""

    @abc.abstractmethod
    def _close(self) -> None:
        """Release backend resources (called once, with the lock held)."""
