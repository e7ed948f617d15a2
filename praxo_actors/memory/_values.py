"""A store's namespaces, keys and values: checked, encoded, decoded, the same for every backend.

Everything users can get wrong is checked here once, by the base every backend extends
(:class:`~praxo_actors.memory._base.StoreBase`), so all accept and refuse the same calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

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

__all__ = [
    "Clock",
    "Namespace",
    "check_key",
    "check_namespace",
    "check_prefix",
    "decode_row",
    "decode_text",
    "encode_value",
    "json_equal",
]

Namespace = tuple[str, ...]
"""A namespace: a non-empty tuple of non-empty labels, e.g. ``("users", "ada", "notes")``."""

Clock = Callable[[], int]
"""A source of wall-clock nanoseconds, ``time.time_ns`` by default; injected by tests."""

_decode_value = msgspec.json.Decoder(dict[str, Any]).decode


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


def _matches(row: _Row, filter: dict[str, Any] | None, needle: str | None) -> bool:
    if needle is not None and needle not in str(row.text).casefold():
        return False
    if filter:
        value = decode_row(row)
        return all(k in value and json_equal(value[k], v) for k, v in filter.items())
    return True
