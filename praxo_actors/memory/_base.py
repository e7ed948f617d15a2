"""The store interface, the validation every backend shares, and the base both backends extend.

Backends implement five small hooks (``_write``, ``_read``, ``_remove``, ``_scan``,
``_namespaces``) over rows holding the value's canonical JSON text; everything users can get
wrong is checked here once, so both backends accept and refuse exactly the same calls.
"""

from __future__ import annotations

import abc
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from types import TracebackType
from typing import Any, NamedTuple, Protocol, Self, runtime_checkable

import msgspec

from praxo_actors._errors import JSONError, MemoryStoreError, PraxoError
from praxo_actors.codes import (
    MEMORY_INVALID_KEY,
    MEMORY_INVALID_NAMESPACE,
    MEMORY_INVALID_VALUE,
    STORE_FAILED,
)
from praxo_actors.core import encode_json
from praxo_actors.memory._item import Item

__all__ = ["Clock", "Namespace", "Store", "StoreBase", "decode_row", "decode_text"]

Namespace = tuple[str, ...]
"""A namespace: a non-empty tuple of non-empty labels, e.g. ``("users", "ada", "notes")``."""

Clock = Callable[[], int]
"""A source of wall-clock nanoseconds, ``time.time_ns`` by default; injected by tests."""

_decode_value = msgspec.json.Decoder(dict[str, Any]).decode


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


class _Row(NamedTuple):
    """A stored document as backends keep it: the value as canonical JSON text."""

    namespace: Namespace
    key: str
    text: str
    created_ns: int
    updated_ns: int


def _check_label(label: object) -> str:
    if not isinstance(label, str) or not label or "\x00" in label:
        raise MemoryStoreError(
            MEMORY_INVALID_NAMESPACE,
            f"namespace labels must be non-empty strings without NUL, got {label!r}",
        )
    if not label.isascii():
        _check_utf8(label, MEMORY_INVALID_NAMESPACE)
    return label


def _check_utf8(text: str, code: str) -> None:
    # A lone surrogate cannot be stored as UTF-8, so it could never be read back equal.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise MemoryStoreError(code, f"{text!r} is not valid Unicode text") from None


def check_prefix(prefix: object) -> Namespace:
    """Return ``prefix`` as a tuple of valid labels; the empty prefix is allowed.

    Raises:
        MemoryStoreError: ``MEMORY_INVALID_NAMESPACE`` for a non-sequence or a bad label.
    """
    if not isinstance(prefix, tuple | list):
        raise MemoryStoreError(
            MEMORY_INVALID_NAMESPACE, f"namespace must be a tuple of str, got {prefix!r}"
        )
    return tuple(_check_label(label) for label in prefix)


def check_namespace(namespace: object) -> Namespace:
    """Return ``namespace`` as a non-empty tuple of valid labels.

    Raises:
        MemoryStoreError: ``MEMORY_INVALID_NAMESPACE``.
    """
    labels = check_prefix(namespace)
    if not labels:
        raise MemoryStoreError(MEMORY_INVALID_NAMESPACE, "namespace must not be empty")
    return labels


def check_key(key: object) -> str:
    """Return ``key`` when it is a non-empty str without NUL.

    Raises:
        MemoryStoreError: ``MEMORY_INVALID_KEY``.
    """
    if not isinstance(key, str) or not key or "\x00" in key:
        raise MemoryStoreError(
            MEMORY_INVALID_KEY, f"key must be a non-empty string without NUL, got {key!r}"
        )
    if not key.isascii():
        _check_utf8(key, MEMORY_INVALID_KEY)
    return key


def encode_value(value: object) -> str:
    """Return the canonical JSON text of ``value``, which must be a JSON object.

    Raises:
        MemoryStoreError: ``MEMORY_INVALID_VALUE`` for a non-object or non-JSON content.
    """
    if not isinstance(value, dict):
        raise MemoryStoreError(
            MEMORY_INVALID_VALUE, f"value must be a JSON object, got {type(value).__name__}"
        )
    try:
        return encode_json(value)
    except JSONError as exc:
        raise MemoryStoreError(MEMORY_INVALID_VALUE, f"value is not JSON: {exc}") from None


def _check_count(name: str, value: object, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def json_equal(a: object, b: object) -> bool:
    """Return whether two JSON values are equal as JSON: booleans are not numbers, 1 == 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(json_equal, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(v, b[k]) for k, v in a.items())
    return type(a) is type(b) and a == b


def decode_row(row: _Row) -> dict[str, Any]:
    """Return a row's value; a backend only ever stores JSON objects, so anything else is damage.

    Raises:
        PraxoError: ``STORE_FAILED`` when the stored text is not a JSON object.
    """
    return decode_text(row.namespace, row.key, row.text)


def decode_text(namespace: Namespace, key: str, text: str) -> dict[str, Any]:
    """Return the value of the text stored under ``namespace`` and ``key`` (see :func:`decode_row`).

    Raises:
        PraxoError: ``STORE_FAILED`` when the stored text is not a JSON object.
    """
    try:
        return _decode_value(text)
    except (msgspec.DecodeError, TypeError) as exc:
        raise PraxoError(
            STORE_FAILED, f"the value stored under {namespace!r}, {key!r} is damaged: {exc}"
        ) from None


def _to_item(row: _Row) -> Item:
    return Item(row.namespace, row.key, decode_row(row), row.created_ns, row.updated_ns)


class StoreBase(abc.ABC):
    """The public store API over backend hooks: validation, locking, filtering and paging.

    Every public method holds one re-entrant lock for its whole duration, so a store may be
    shared by threads. Subclasses implement the hooks, which run with that lock held.
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = time.time_ns if clock is None else clock
        self._lock = threading.RLock()
        self._closed = False

    def put(self, namespace: Sequence[str], key: str, value: dict[str, Any]) -> None:
        """Store a copy of ``value`` under ``namespace`` and ``key``, replacing any previous one.

        Raises:
            MemoryStoreError: ``MEMORY_INVALID_NAMESPACE``, ``MEMORY_INVALID_KEY`` or
                ``MEMORY_INVALID_VALUE``.
        """
        ns, key, text = check_namespace(namespace), check_key(key), encode_value(value)
        with self._lock:
            self._check_open()
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


def _matches(row: _Row, filter: dict[str, Any] | None, needle: str | None) -> bool:
    if needle is not None and needle not in str(row.text).casefold():
        return False
    if filter:
        value = decode_row(row)
        return all(k in value and json_equal(value[k], v) for k, v in filter.items())
    return True
