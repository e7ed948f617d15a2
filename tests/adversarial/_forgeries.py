"""Forgeries of real session logs (``_session_logs.py``): what a writer to the store, without the
checkpoint key, can do to it.

A forgery is a name, its class, and an *overlay*: documents to put (a dict) or drop (None) over
the real log. Classes: ``bytes`` (bit flips and byte edits of every signed document), ``fields``
(fields removed, added, retyped; type tags outside the allowlist; the old signature kept, dropped
or made with another key), ``resigned`` (the same edits signed with the real key: not forgeries,
only the validation behind the signature is tested on them), ``records`` (swapped, dropped,
duplicated, moved between sessions, older generations), ``heads`` (past or before the records,
retyped, dropped, another session's), ``snapshots`` (other sessions', older versions, 0.1
checkpoints under another key), ``pending`` and ``journal`` (edited, moved between runs).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from typing import Any

import msgspec
from _session_logs import KEY, Logs

from praxo_actors.agent._journal import _sign as sign_entry
from praxo_actors.core import dump_checkpoint
from praxo_actors.core._checkpoint import _encoder, _sign
from praxo_actors.memory._log import HEADS, JOURNAL, PENDING, RECORDS, SNAPSHOTS
from praxo_actors.models import Session

__all__ = ["Forgery", "forgeries", "session_of"]

OTHER_KEY = b"o" * 32
Overlay = dict[tuple[tuple[str, ...], str], dict[str, Any] | None]
Forgery = tuple[str, str, Overlay]  # class, name, overlay
TEXT_FIELD = {RECORDS: "record", SNAPSHOTS: "checkpoint", JOURNAL: "entry"}
HOSTILE_VALUES: list[Any] = [None, 0, -1, 1.5, 2**70, "", "x", True, [], {}, [1], {"a": 1}]
HOSTILE_TAGS = ["os.system", "builtins.eval", "Message", "message ", "praxo.evil", "", 7]


def session_of(namespace: tuple[str, ...], key: str) -> str:
    """The session a document belongs to."""
    return key if namespace in (HEADS, SNAPSHOTS, PENDING) else key.rsplit("#", 1)[0]


def _byte_edits(text: str) -> Iterator[tuple[str, str]]:
    data = text.encode()
    step = max(1, len(data) // 24)
    for pos in range(0, len(data), step):
        byte = data[pos]
        if byte < 0x80:
            for bit in (0, 5):
                flipped = data[:pos] + bytes([byte ^ 1 << bit]) + data[pos + 1 :]
                yield f"flip {pos}.{bit}", flipped.decode("utf-8", "replace")
        yield f"delete {pos}", (data[:pos] + data[pos + 1 :]).decode("utf-8", "replace")
        yield f"insert {pos}", (data[:pos] + b'"' + data[pos:]).decode("utf-8", "replace")
        yield f"truncate {pos}", data[:pos].decode("utf-8", "replace")
    yield "empty", ""
    yield "doubled", text + text
    yield "not an object", "[" + text + "]"


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key in value:
            yield from _paths(value[key], (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*path, i))


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    doc = copy.deepcopy(doc)
    target = doc
    for part in path[:-1]:
        target = target[part]
    if value is _DROP:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


_DROP = object()


def _field_edits(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in _paths(doc):
        if not path or path == ("signature",) or path == ("s",):
            continue
        if isinstance(path[-1], str):
            yield f"drop {path}", _set(doc, path, _DROP)
        if path[-1] in ("type", "format"):
            for tag in HOSTILE_TAGS:
                yield f"tag {path}={tag!r}", _set(doc, path, tag)
        for value in HOSTILE_VALUES[:: 1 if len(path) < 3 else 4]:
            yield f"retype {path}={value!r:.12}", _set(doc, path, value)
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        if isinstance(parent, dict) and path[-1] == next(iter(parent)):
            yield f"extra field at {path[:-1]}", _set(doc, (*path[:-1], "zz_extra"), 1)


def _resign(doc: dict[str, Any], namespace: tuple[str, ...], where: str, key: bytes | None) -> str:
    doc = dict(doc)
    field = "s" if namespace == JOURNAL else "signature"
    doc.pop(field, None)
    if key is not None:
        body = _encoder.encode(doc)
        doc[field] = sign_entry(key, where, body) if namespace == JOURNAL else _sign(key, body)
    return _encoder.encode(doc).decode()


def _where(logs: Logs, key: str) -> str:
    sid, index = key.rsplit("#", 1)
    return f"{sid}#{logs.pending[sid]}#{index}"


def _document_forgeries(logs: Logs) -> Iterator[Forgery]:
    for (ns, key), value in sorted(logs.docs.items()):
        field = TEXT_FIELD.get(ns)
        if field is None:
            continue
        if field in value:
            text = value[field]
        else:  # a record stored as the document itself: forged in the wrapped form, also read
            text, value = _encoder.encode(value).decode(), {}
        for how, edited in _byte_edits(text):
            yield "bytes", f"{ns[1]}/{key}: {how}", {(ns, key): {**value, field: edited}}
        doc = msgspec.json.decode(text)
        where = _where(logs, key) if ns == JOURNAL else ""
        for how, edited_doc in _field_edits(doc):
            for kind, key_used in (("kept", "keep"), ("unsigned", None), ("other key", OTHER_KEY)):
                if key_used == "keep":
                    body = msgspec.json.encode(edited_doc).decode()
                else:
                    body = _resign(edited_doc, ns, where, key_used)
                name = f"{ns[1]}/{key}: {how}, signature {kind}"
                yield "fields", name, {(ns, key): {**value, field: body}}
            name = f"{ns[1]}/{key}: {how}"
            resigned = _resign(edited_doc, ns, where, KEY)
            yield "resigned", name, {(ns, key): {**value, field: resigned}}
        # The same document, spelt differently: the signature is over its canonical form.
        spelt = msgspec.json.format(text, indent=2)
        yield "bytes", f"{ns[1]}/{key}: reformatted", {(ns, key): {**value, field: spelt}}


def _record_forgeries(logs: Logs) -> Iterator[Forgery]:
    docs = logs.docs
    records = sorted(k for (ns, k) in docs if ns == RECORDS)
    by_session: dict[str, list[str]] = {}
    for key in records:
        by_session.setdefault(session_of(RECORDS, key), []).append(key)
    for sid, keys in by_session.items():
        for a, b in itertools.combinations(keys, 2):
            swap = {(RECORDS, a): docs[RECORDS, b], (RECORDS, b): docs[RECORDS, a]}
            yield "records", f"swap {a} {b}", swap
            yield "records", f"duplicate {a} at {b}", {(RECORDS, b): docs[RECORDS, a]}
        for key in keys:
            yield "records", f"drop {key}", {(RECORDS, key): None}
            head = docs[HEADS, sid]
            n = int(key.rsplit("#", 1)[1])
            after = {(RECORDS, f"{sid}#{head['version'] + 1}"): docs[RECORDS, key]}
            grown = {**after, (HEADS, sid): {**head, "version": head["version"] + 1}}
            yield "records", f"replay {key} as the next record", grown
            for other, other_keys in by_session.items():
                if other == sid:
                    continue
                there = f"{other}#{n}"
                yield "records", f"move {key} to {there}", {(RECORDS, there): docs[RECORDS, key]}
                for okey in other_keys:
                    yield "records", f"move {okey} to {key}", {(RECORDS, key): docs[RECORDS, okey]}
    # Older generations: every record and snapshot the store ever held, put back in place.
    seen: set[str] = set()
    for generation in logs.generations:
        for (ns, key), value in generation.items():
            if ns not in (RECORDS, SNAPSHOTS) or docs.get((ns, key)) == value:
                continue
            mark = f"{ns}{key}{value}"
            if mark in seen:
                continue
            seen.add(mark)
            sid = session_of(ns, key)
            yield "records", f"old {ns[1]}/{key}", {(ns, key): value}
            if ns == SNAPSHOTS:
                base = value["version"]
                head = {**docs[HEADS, sid], "base": base}
                yield (
                    "snapshots",
                    f"old snapshot {key}@{base}",
                    {(ns, key): value, (HEADS, sid): head},
                )
                if any(k[0] == RECORDS and session_of(*k) == sid for k in generation):
                    records = {k: v for k, v in generation.items() if k[0] == RECORDS}
                    name = f"old snapshot {key}@{base} with its records"
                    yield "snapshots", name, {(ns, key): value, (HEADS, sid): head, **records}


def _head_forgeries(logs: Logs) -> Iterator[Forgery]:
    docs = logs.docs
    for (ns, sid), head in sorted(docs.items()):
        if ns != HEADS:
            continue
        v = head["version"]
        for version, base in itertools.product(range(v + 3), range(v + 2)):
            if (version, base) != (v, head["base"]):
                edited = {**head, "version": version, "base": base}
                kind = "rollback" if version < v and base == head["base"] else "heads"
                yield kind, f"head {sid} v{version} b{base}", {(HEADS, sid): edited}
        yield "rollback", f"drop head {sid}", {(HEADS, sid): None}
        for name in ("version", "base", "results"):
            for value in HOSTILE_VALUES:
                yield (
                    "heads",
                    f"head {sid} {name}={value!r:.12}",
                    {(HEADS, sid): {**head, name: value}},
                )
            yield (
                "heads",
                f"head {sid} without {name}",
                {(HEADS, sid): {k: x for k, x in head.items() if k != name}},
            )
        for (ons, other), other_head in docs.items():
            if ons == HEADS and other != sid:
                yield "heads", f"head of {other} at {sid}", {(HEADS, sid): other_head}


def _snapshot_forgeries(logs: Logs) -> Iterator[Forgery]:
    docs = logs.docs
    snapshots = [(k, v) for (ns, k), v in docs.items() if ns == SNAPSHOTS]
    for sid in logs.states:
        for other, value in snapshots:
            if other != sid:
                yield "snapshots", f"snapshot of {other} at {sid}", {(SNAPSHOTS, sid): value}
                head = {**docs[HEADS, sid], "base": value["version"]}
                yield (
                    "snapshots",
                    f"snapshot of {other} at {sid}, head moved",
                    {
                        (SNAPSHOTS, sid): value,
                        (HEADS, sid): head,
                    },
                )
        history = logs.history(sid)
        for key, kind in ((OTHER_KEY, "other key"), (None, "unsigned")):
            old = dump_checkpoint(Session(sid, history), key=key).decode()
            yield (
                "snapshots",
                f"0.1 checkpoint of {sid}, {kind}",
                {
                    (SNAPSHOTS, sid): {"checkpoint": old},
                    (HEADS, sid): None,
                },
            )
        if (SNAPSHOTS, sid) in docs:
            value = docs[SNAPSHOTS, sid]
            yield "snapshots", f"drop snapshot {sid}", {(SNAPSHOTS, sid): None}
            for outer in (value["version"] + 1, 0, "x", None):
                edited = {**value, "version": outer}
                yield (
                    "snapshots",
                    f"snapshot {sid} outer version {outer!r}",
                    {(SNAPSHOTS, sid): edited},
                )
            yield "snapshots", f"snapshot {sid} not text", {(SNAPSHOTS, sid): {"checkpoint": 5}}


def _pending_forgeries(logs: Logs) -> Iterator[Forgery]:
    docs = logs.docs
    for sid, run_id in logs.pending.items():
        pending = docs[PENDING, sid]
        other = next(s for s in logs.pending if s != sid)
        edits: dict[str, Any] = {
            "input": ["wait for evil", "", "wait for " + other],
            "agent": ["plain", "nobody"],
            "run_id": [logs.pending[other], run_id + "x"],
            "resume": ['{"approved": true}', "not json"],
            "resumes": [3, 2, -1],
            "entries": [0, 1, 3, 100],
        }
        for name, values in edits.items():
            for value in values:
                yield (
                    "pending",
                    f"pending {sid} {name}={value!r}",
                    {(PENDING, sid): {**pending, name: value}},
                )
        yield "pending", f"pending {sid} retyped", {(PENDING, sid): {**pending, "entries": "2"}}
        yield "pending", f"pending of {other} at {sid}", {(PENDING, sid): docs[PENDING, other]}
        entries = [k for (ns, k) in docs if ns == JOURNAL and session_of(ns, k) == sid]
        for key in entries:
            n = key.rsplit("#", 1)[1]
            yield "journal", f"drop {key}", {(JOURNAL, key): None}
            yield (
                "journal",
                f"entry of {other} at {key}",
                {(JOURNAL, key): docs[JOURNAL, f"{other}#{n}"]},
            )
        a, b = entries[:2]
        yield (
            "journal",
            f"swap {a} {b}",
            {(JOURNAL, a): docs[JOURNAL, b], (JOURNAL, b): docs[JOURNAL, a]},
        )
        yield (
            "journal",
            f"whole journal of {other} at {sid}",
            {
                **{(JOURNAL, k): docs[JOURNAL, k.replace(sid, other, 1)] for k in entries},
                (PENDING, sid): {**docs[PENDING, other]},
            },
        )


def forgeries(logs: Logs) -> Iterator[Forgery]:
    """Every forgery of ``logs``, in a fixed order."""
    yield from _document_forgeries(logs)
    yield from _record_forgeries(logs)
    yield from _head_forgeries(logs)
    yield from _snapshot_forgeries(logs)
    yield from _pending_forgeries(logs)
