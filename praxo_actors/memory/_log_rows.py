"""The session log's rows as stored: what a commit writes, and how a reader reads them back.

Every row is one JSON object's text. A run's record (``praxo/records / s#k``) and its result
(``praxo/results / s#j``) are stored as the documents themselves, the text the session built,
byte for byte: the store neither decodes nor encodes them again. Logs written before stored
each wrapped in a document of its own, ``{"record": "<text>"}`` and ``{"result": "<text>"}``;
both forms are read (neither document has a top-level field named ``record`` or ``result``, so
the two cannot be confused), and a text that is not a JSON object (only a writer other than
the runtime gives one) is still stored wrapped.

A head, ``{"agent": a, "base": b, "results": n, "version": v}``, is written from its ints
without an encoder's walk and read back into a typed struct, not a dict.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from praxo_actors.memory._log_types import MAX_ENTRIES, MAX_RECORDS, PendingRun

__all__ = [
    "Head",
    "doc_text",
    "fault",
    "head_row",
    "key",
    "pending_of",
    "read_head",
    "row_text",
    "stored_text",
]

_ENCODER = msgspec.json.Encoder(order="sorted")
_WRAPPED = {"record": '{"record":', "result": '{"result":'}


def key(session_id: str, n: int) -> str:
    """The key of a session's ``n``-th record, journal entry or result slot."""
    # Unambiguous: ``n`` is all digits, so the last "#" ends the session id.
    return f"{session_id}#{n}"


def row_text(name: str, text: str) -> str:
    """The stored form of a record's or a result's text (``name``: ``record`` or ``result``)."""
    if text[:1] == "{" and text[-1:] == "}":
        return text  # a document: stored as it is
    return f'{{"{name}":{_ENCODER.encode(text).decode()}}}'


def stored_text(name: str, text: str | None) -> str:
    """The document a record or result row holds, in either form.

    A missing or broken row gives "": it revives as invalid JSON, and the session refuses to
    restore.
    """
    if text is None:
        return ""
    if text.startswith(_WRAPPED[name]):
        try:
            value = msgspec.json.decode(text)
        except (msgspec.MsgspecError, ValueError):
            return ""
        inner = value.get(name) if isinstance(value, dict) else None
        return inner if isinstance(inner, str) else ""
    return text


def doc_text(doc: dict[str, Any]) -> str:
    """The canonical JSON text of a document a store gave back as a value."""
    return _ENCODER.encode(doc).decode()


class Head(NamedTuple):
    """A session's log position as its head row holds it."""

    version: int
    base: int
    results: int
    agent: str | None
    ok: bool  # False: the row cannot be a head (its fields are missing or mistyped)


class _HeadDoc(msgspec.Struct):
    version: Any = None
    base: Any = None
    results: Any = None
    agent: Any = None


_decode_head = msgspec.json.Decoder(_HeadDoc).decode


def read_head(text: str) -> Head:
    """Return the head a row's text holds (``ok`` False for a broken one)."""
    try:
        doc = _decode_head(text)
    except (msgspec.MsgspecError, ValueError):
        return Head(0, 0, 0, None, False)
    version, base, results, agent = doc.version, doc.base, doc.results, doc.agent
    named = agent if isinstance(agent, str) and agent else None
    typed = type(version) is int and type(base) is int and type(results) is int
    if typed and version >= 0 and base >= 0 and results >= 0:
        return Head(version, base, results, named, True)
    v, b, r = (n if type(n) is int and n >= 0 else 0 for n in (version, base, results))
    return Head(v, b, r, named, False)


def head_row(version: int, base: int, results: int, agent: str | None) -> str:
    """The text of a head row, keys in sorted order: what the encoder would write."""
    named = "" if agent is None else f'"agent":{_ENCODER.encode(agent).decode()},'
    return f'{{{named}"base":{base},"results":{results},"version":{version}}}'


def fault(base: int, version: int, pending: PendingRun | None) -> str | None:
    """Why a head (or pending run) cannot describe a real log; None if it can."""
    if version < base:
        return f"the head is at version {version}, before its snapshot at {base}"
    if version - base > MAX_RECORDS:
        return f"the head claims {version - base} records after the snapshot"
    if pending is not None and pending.entries > MAX_ENTRIES:
        return f"the pending run claims {pending.entries} journal entries"
    return None


def pending_of(doc: dict[str, Any] | None) -> PendingRun | None:
    """The pending run a document holds (a broken one: a run with no id)."""
    if doc is None:
        return None
    try:
        return msgspec.convert(doc, PendingRun)
    except msgspec.ValidationError:
        return PendingRun(run_id="", agent="", input="", entries=0)
