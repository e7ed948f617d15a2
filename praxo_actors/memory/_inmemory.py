"""A memory store kept in a dict: fast, thread-safe, and gone when the process ends."""

from __future__ import annotations

import itertools
import re
import struct
from collections.abc import Iterator

from praxo_actors.memory._base import Clock, Namespace, StoreBase, _Row

__all__ = ["InMemoryStore"]

# A row is one bytes object: created_ns and updated_ns as two signed 64-bit ints, then the
# document's text, shortened (below) and UTF-8 encoded. ~50 bytes of overhead a row, where a
# (text, created, updated) tuple took ~145: a session's log is a few rows (its records since
# its snapshot, its results, its head), kept for every session the process has seen.
_STAMPS = struct.Struct("<qq")
_HEAD = _STAMPS.size
# A stamp outside 64 bits (only a user's clock could give one) keeps the row as a tuple.
_Stored = bytes | tuple[str, int, int]

# The session log's own rows, shortened with a fixed vocabulary: each phrase its log writes
# in every record, result, head and run-index row becomes one control character, which JSON
# text never holds raw (it escapes U+0000-U+001F). A record of one exchange goes from ~330
# characters to ~50, a result from ~150 to ~45 and a head from ~50 to ~10.
# The table is chosen by the row's namespace (one lookup; the phrases of one kind of row
# only) and applies to a text starting with its first phrase (whose code then marks the
# table); any other text is stored as it is, so a change of the log's format costs only the
# saving. No phrase holds a code and no code occurs in the text, so replacing each code by its
# phrase gives the text back exactly; a text holding a control character is stored as it is.
_END = '","tool_call_id":null,"tool_calls":[],"type":"message"}'
_RECORD = (
    '{"format":"praxo.record","messages":[{"content":"',
    '","name":null,"role":"user' + _END + ',{"content":"',
    '","name":null,"role":"assistant' + _END + '],"run_id":"run_',
    '","name":null,"role":"',
    _END,
    ',{"content":"',
    '],"run_id":"run_',
    '","seq":',
    ',"session_id":"',
    '","version":1}',
)
_RESULT = (
    '{"agent":"',
    '","model_calls":1,"output":"',
    '","model_calls":',
    ',"output":"',
    '","run_id":"run_',
    '","steps":1,"structured":null,"tool_calls":0,"usage":{}}',
    '","steps":',
    ',"structured":null,"tool_calls":',
    ',"usage":{}}',
)
_HEADS = ('{"agent":"', '","base":', ',"results":', ',"version":')
_RUNS = ('{"n":', ',"session":"')
_VERBATIM = "\x00"  # marks a text that itself starts with a control character
_CONTROL = re.compile("[\x00-\x1f]")
_Pairs = list[tuple[str, str]]


def _tables() -> tuple[dict[Namespace, _Pairs], dict[str, _Pairs]]:
    code = 1
    shorten: dict[Namespace, _Pairs] = {}
    restore: dict[str, _Pairs] = {}
    for name, phrases in (
        ("records", _RECORD),
        ("results", _RESULT),
        ("heads", _HEADS),
        ("runs", _RUNS),
    ):
        pairs = [(phrase, chr(code + i)) for i, phrase in enumerate(phrases)]
        code += len(phrases)
        shorten["praxo", name] = pairs
        restore[pairs[0][1]] = pairs
    assert code <= 0x20, "the codes are the control characters U+0001-U+001F"
    return shorten, restore


_SHORTEN, _RESTORE = _tables()


def _shorten(namespace: Namespace, text: str) -> str:
    pairs = _SHORTEN.get(namespace)
    if pairs is not None:
        first, mark = pairs[0]
        if text.startswith(first) and _CONTROL.search(text) is None:
            # The first phrase is replaced where it starts the text only: its code then occurs
            # once, which is all that restoring needs.
            text = mark + text[len(first) :]
            for phrase, code in pairs[1:]:
                text = text.replace(phrase, code)
            return text
    if text[:1] and text[0] < " ":
        return _VERBATIM + text
    return text


def _restore(text: str) -> str:
    pairs = _RESTORE.get(text[:1])
    if pairs is not None:
        for phrase, code in pairs:
            text = text.replace(code, phrase)
        return text
    return text[1:] if text[:1] == _VERBATIM else text


def _pack(namespace: Namespace, text: str, created: int, updated: int) -> _Stored:
    try:
        stamps = _STAMPS.pack(created, updated)
    except struct.error:
        return (text, created, updated)
    return stamps + _shorten(namespace, text).encode("utf-8", "surrogatepass")


def _unpack(stored: _Stored) -> tuple[str, int, int]:
    if isinstance(stored, tuple):
        return stored
    created, updated = _STAMPS.unpack_from(stored)
    return _restore(stored[_HEAD:].decode("utf-8", "surrogatepass")), created, updated


def _text(stored: _Stored) -> str:
    if isinstance(stored, tuple):
        return stored[0]
    return _restore(stored[_HEAD:].decode("utf-8", "surrogatepass"))


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
        rows[key] = _pack(namespace, text, created, max(now_ns, created))

    def _read(self, namespace: Namespace, key: str) -> _Row | None:
        rows = self._data.get(namespace)
        found = None if rows is None else rows.get(key)
        return None if found is None else _Row(namespace, key, *_unpack(found))

    def _read_texts(self, namespace: Namespace, keys: list[str]) -> list[str | None]:
        # The session log's reads (heads, pending runs): no _Row built per key only to be dropped.
        rows = self._data.get(namespace)
        if rows is None:
            return [None] * len(keys)
        found = [rows.get(key) for key in keys]
        return [None if row is None else _text(row) for row in found]

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
