"""Checkpoint group: load documents, round-trip sessions, pin the signed encoding, detect tampering.

Sessions are JSON in the shape of the data model (``{"id", "messages", "metadata"}``; a message is
``{"role", "content", "tool_calls", "tool_call_id", "name"}``, optional fields may be left out; a
content block is ``{"type": "text", "text"}`` or ``{"type": "image", "url", "media_type"}``).
Keys are UTF-8 strings. Each case has an ``op``:

- ``load``: ``document`` (a JSON value, encoded compactly) or ``raw`` (the exact text) is loaded
  with ``allowed_types`` (default: the five standard tags) and ``key``; → ``expect`` session or
  ``error`` code.
- ``roundtrip``: ``session`` is dumped with ``metadata_keys`` and ``key`` and loaded with ``key``.
- ``dump``: ``session`` is dumped with ``metadata_keys`` and ``key``; the output must parse to
  ``expect`` (a checkpoint document, its ``signature`` included).
- ``tamper``: ``session`` is dumped with ``key``; the document member at ``path`` (a list of keys
  and indexes) is set to ``value`` (or removed when ``remove`` is true), and the document is loaded
  with ``load_key`` (default ``key``; null loads without a key).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from conformance._runner import CaseFailure, expect_outcome
from praxo_actors.core import DEFAULT_CHECKPOINT_TYPES, dump_checkpoint, load_checkpoint
from praxo_actors.models import Session


def run_case(case: dict[str, Any]) -> None:
    """Run one checkpoint case; raise on mismatch."""
    op = case["op"]
    key = _key(case.get("key"))
    if "expect" in case and op != "dump":
        case = {**case, "expect": _neutral(_session(case["expect"]))}
    if op == "load":
        data = case["raw"].encode() if "raw" in case else json.dumps(case["document"]).encode()
        allowed = frozenset(case.get("allowed_types", DEFAULT_CHECKPOINT_TYPES))
        expect_outcome(case, lambda: load_checkpoint(data, allowed, key=key), _neutral)
    elif op == "roundtrip":
        session = _session(case["session"])
        keys = case.get("metadata_keys")
        expect_outcome(
            case,
            lambda: load_checkpoint(dump_checkpoint(session, keys, key=key), key=key),
            _neutral,
        )
    elif op == "dump":
        session = _session(case["session"])
        keys = case.get("metadata_keys")
        expect_outcome(case, lambda: json.loads(dump_checkpoint(session, keys, key=key)))
    elif op == "tamper":
        doc = json.loads(dump_checkpoint(_session(case["session"]), key=key))
        _edit(doc, case["path"], case.get("value"), remove=case.get("remove", False))
        load_key = _key(case["load_key"]) if "load_key" in case else key
        data = json.dumps(doc).encode()
        expect_outcome(case, lambda: load_checkpoint(data, key=load_key), _neutral)
    else:
        raise CaseFailure(f"unknown op {op!r}")


def _key(value: str | None) -> bytes | None:
    return None if value is None else value.encode("utf-8")


def _session(value: dict[str, Any]) -> Session:
    return msgspec.convert(value, Session)


def _neutral(session: Session) -> Any:
    return msgspec.to_builtins(session)


def _edit(doc: Any, path: list[Any], value: Any, *, remove: bool) -> None:
    target = doc
    for step in path[:-1]:
        target = target[step]
    if remove:
        del target[path[-1]]
    else:
        target[path[-1]] = value
