"""The record a memory store returns for one stored document."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["Item"]


class Item(msgspec.Struct, frozen=True):
    """One stored document: where it lives, its JSON object value and when it was written.

    ``value`` is a fresh copy on every read: mutating it never changes the store.
    ``created_ns`` is kept across updates; ``updated_ns`` is never less than it.
    """

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_ns: int
    updated_ns: int
