"""A memory store kept in a dict: fast, thread-safe, and gone when the process ends."""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterator

from praxo_actors.memory._base import Clock, Namespace, StoreBase, _Row

__all__ = ["InMemoryStore"]

# A row is one bytes object: created_ns and updated_ns as two signed 64-bit ints, then the
# document's text, UTF-8 encoded (lone surrogates too) and shortened (below). ~50 bytes of
# overhead a row, where a (text, created, updated) tuple took ~145: a session's log is a few
# rows (its records since its snapshot, its results, its head), kept for every session the
# process has seen.
_STAMPS = struct.Struct("<qq")
_HEAD = _STAMPS.size
# A stamp outside 64 bits (only a user's clock could give one) keeps the row as a tuple.
_Stored = bytes | tuple[str, int, int]

# The session log's own rows, shortened with a fixed vocabulary: each phrase its log writes
# in every record, result, head and run-index row becomes one byte that UTF-8 never holds
# (0xC0, 0xC1, 0xF5-0xFF), so replacing each code by its phrase gives any text back exactly,
# whatever it holds (control characters, surrogates, other phrases) and whichever phrases it
# held: nothing needs checking before, and a change of the log's format costs only the saving.
# A record of one exchange goes from ~330 bytes to ~50, a result from ~150 to ~45 and a head
# from ~50 to ~15. The table is the row's namespace's (one lookup, on writing and on reading;
# a row is never moved to another namespace). The phrases are ASCII, which UTF-8 never holds
# inside another character, and the work is done on the UTF-8 bytes, one C call a phrase:
# the common phrases on every row, the rare ones (what the common ones leave of other
# messages, other counts) only while the row still holds '":', as each of them does.
_END = '","tool_call_id":null,"tool_calls":[],"type":"message"}'
_RECORD = (
    '{"format":"praxo.record","messages":[{"content":"',
    '","name":null,"role":"user' + _END + ',{"content":"',
    '","name":null,"role":"assistant' + _END + '],"run_id":"run_',
    '","seq":',
    ',"session_id":"',
    '","version":1}',
)
_RECORD_RARE = ('","name":null,"role":"', _END, ',{"content":"', '],"run_id":"run_')
_RESULT = (
    '{"agent":"',
    '","model_calls":1,"output":"',
    '","run_id":"run_',
    '","steps":1,"structured":null,"tool_calls":0,"usage":{}}',
)
_RESULT_RARE = (
    '","model_calls":',
    ',"output":"',
    '","steps":',
    ',"structured":null,"tool_calls":',
    ',"usage":{}}',
)
_HEADS = ('{"agent":"', '","base":', ',"results":', ',"version":')
_RUNS = ('{"n":', ',"session":"')
_CODES = bytes([0xC0, 0xC1, *range(0xF5, 0x100)])  # the bytes UTF-8 never holds
_RARE = b'":'
_Pairs = tuple[tuple[bytes, bytes], ...]


def _pairs(phrases: tuple[str, ...]) -> _Pairs:
    assert len(phrases) <= len(_CODES)
    return tuple((p.encode(), _CODES[i : i + 1]) for i, p in enumerate(phrases))


_Table = tuple[_Pairs, _Pairs, _Pairs]


def _tables() -> dict[Namespace, _Table]:
    """Per namespace: its common phrases and codes, its rare ones, and all its codes and
    phrases (to restore)."""
    tables: dict[Namespace, _Table] = {}
    for name, common, rare in (
        ("records", _RECORD, _RECORD_RARE),
        ("results", _RESULT, _RESULT_RARE),
        ("heads", _HEADS, ()),
        ("runs", _RUNS, ()),
    ):
        assert all('":' in phrase for phrase in rare)
        pairs = _pairs(common + rare)
        restore = tuple((code, phrase) for phrase, code in pairs)
        tables["praxo", name] = (pairs[: len(common)], pairs[len(common) :], restore)
    return tables


_TABLES = _tables()


def _restore(namespace: Namespace, data: bytes) -> str:
    """The text a row's stored form (after its stamps) holds."""
    table = _TABLES.get(namespace)
    if table is not None:
        for code, phrase in table[2]:
            data = data.replace(code, phrase)
    return data.decode("utf-8", "surrogatepass")


def _pack(namespace: Namespace, text: str, created: int, updated: int) -> _Stored:
    """A row as stored: its stamps, then its text's UTF-8, shortened if its namespace is one
    of the log's."""
    try:
        stamps = _STAMPS.pack(created, updated)
        data = text.encode()
    except struct.error:
        return (text, created, updated)
    except UnicodeEncodeError:  # a lone surrogate
        data = text.encode("utf-8", "surrogatepass")
    table = _TABLES.get(namespace)
    if table is not None:
        common, rare, _ = table
        for phrase, code in common:
            data = data.replace(phrase, code)
        if rare and data.count(_RARE):
            for phrase, code in rare:
                data = data.replace(phrase, code)
    return stamps + data


def _unpack(namespace: Namespace, stored: _Stored) -> tuple[str, int, int]:
    if isinstance(stored, tuple):
        return stored
    created, updated = _STAMPS.unpack_from(stored)
    return _restore(namespace, stored[_HEAD:]), created, updated


def _text(namespace: Namespace, stored: _Stored) -> str:
    if isinstance(stored, tuple):
        return stored[0]
    return _restore(namespace, stored[_HEAD:])


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
        return None if found is None else _Row(namespace, key, *_unpack(namespace, found))

    def _read_texts(self, namespace: Namespace, keys: list[str]) -> list[str | None]:
        # The session log's reads (heads, pending runs): no _Row built per key only to be dropped.
        rows = self._data.get(namespace)
        if rows is None:
            return [None] * len(keys)
        found = [rows.get(key) for key in keys]
        return [None if row is None else _text(namespace, row) for row in found]

    def _remove(self, namespace: Namespace, key: str) -> bool:
        rows = self._data.get(namespace)
        if rows is None or rows.pop(key, None) is None:
            return False
        if not rows:
            del self._data[namespace]
        return True

    def _scan(self, prefix: Namespace, offset: int, limit: int | None) -> Iterator[_Row]:
        rows = (
            _Row(ns, key, *_unpack(ns, self._data[ns][key]))
            for ns in self._namespaces(prefix)
            for key in sorted(self._data[ns])
        )
        return itertools.islice(rows, offset, None if limit is None else offset + limit)

    def _namespaces(self, prefix: Namespace) -> list[Namespace]:
        depth = len(prefix)
        return sorted(ns for ns in self._data if ns[:depth] == prefix)

    def _close(self) -> None:
        self._data.clear()
