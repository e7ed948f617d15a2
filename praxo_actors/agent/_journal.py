"""The effect journal of a durable run: one entry per completed effect, signed to its place.

An entry is JSON ``{"k": kind, "n": name, "v": value, "s": signature}``:

========== ============================================= ===================================
kind       what completed                                ``v``
========== ============================================= ===================================
model      a model call (``n``: its position in the      the ``Response``
           fallback chain)
model_err  a model call that returned ``ModelError``     ``{"code", "message"}``
tool       a tool call (``n``: the tool)                 the result (JSON)
tool_err   a tool call that returned ``ToolError``       ``{"code", "message"}``
started    an ``at_most_once`` tool is about to run      —
resumed    the run was resumed (a plain journal's count) —
value      a repairer or summariser                      its result (JSON)
========== ============================================= ===================================

With a key, ``s`` is the HMAC-SHA256 of ``session#run#index`` and the entry, so entries can be
neither forged nor moved between runs or positions (``CHECKPOINT_SIGNATURE``). Values are revived
by type (``Response`` through msgspec's typed decoding), never by a name the entry gives.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import msgspec

from praxo_actors._errors import CheckpointError
from praxo_actors.agent._effects import CallModel, CallTool, Effect
from praxo_actors.agent._tool import ToolError
from praxo_actors.codes import CHECKPOINT_INVALID, CHECKPOINT_SIGNATURE
from praxo_actors.models import ModelError, Response

__all__ = [
    "Entry",
    "decode_entry",
    "effect_name",
    "encode_entry",
    "entry_reply",
    "place",
    "resumed_entry",
    "started_entry",
]

_encoder = msgspec.json.Encoder(order="sorted")


class Entry(msgspec.Struct, frozen=True):
    """A decoded journal entry."""

    k: str
    n: str = ""
    v: Any = None


def effect_name(effect: Effect) -> str:
    """Name an effect the way its entry does (a tool's name; a model's place in its chain)."""
    if isinstance(effect, CallTool):
        return effect.tool.name
    if isinstance(effect, CallModel):
        return "model"
    return type(effect).__name__


def place(session_id: str, run_id: str, index: int) -> str:
    """The signed place of entry ``index`` of a run: JSON, so no two (session, run) pairs share
    one whatever their ids hold."""
    return _encoder.encode([session_id, run_id, index]).decode()


def _sign(key: bytes, where: str, body: bytes) -> str:
    return hmac.new(key, where.encode() + b"\n" + body, hashlib.sha256).hexdigest()


def _finish(doc: dict[str, Any], where: str, key: bytes | None) -> str:
    body = _encoder.encode(doc)
    if key is not None:
        doc["s"] = _sign(key, where, body)
        body = _encoder.encode(doc)
    return body.decode()


def encode_entry(effect: Effect, value: Any, where: str, key: bytes | None) -> str | None:
    """Return the entry for ``effect`` completing with ``value``, or None if it cannot be kept
    (a value that is not JSON: the run fails on it anyway)."""
    name = effect_name(effect)
    if isinstance(value, Response):
        doc: dict[str, Any] = {"k": "model", "n": name, "v": msgspec.to_builtins(value)}
    elif isinstance(value, ModelError):
        doc = {"k": "model_err", "n": name, "v": {"code": value.code, "message": value.message}}
    elif isinstance(value, ToolError):
        doc = {"k": "tool_err", "n": name, "v": {"code": value.code, "message": value.message}}
    elif isinstance(effect, CallTool):
        doc = {"k": "tool", "n": name, "v": value}
    else:
        doc = {"k": "value", "n": name, "v": value}
    try:
        return _finish(doc, where, key)
    # RecursionError: nested beyond the encoder's reach, or cyclic.
    except (TypeError, ValueError, OverflowError, RecursionError, msgspec.MsgspecError):
        return None


def started_entry(effect: CallTool, where: str, key: bytes | None) -> str:
    """Return the marker written before an ``at_most_once`` tool runs."""
    return _finish({"k": "started", "n": effect.tool.name}, where, key)


def resumed_entry(where: str, key: bytes | None) -> str:
    """Return the marker a resumed run writes before anything runs again."""
    return _finish({"k": "resumed"}, where, key)


def decode_entry(text: str, where: str, key: bytes | None) -> Entry:
    """Verify and decode a journal entry.

    Raises:
        CheckpointError: ``CHECKPOINT_INVALID`` or ``CHECKPOINT_SIGNATURE``.
    """
    try:
        doc = msgspec.json.decode(text)
    except (msgspec.DecodeError, ValueError):
        raise CheckpointError(CHECKPOINT_INVALID, f"journal entry {where} is not JSON") from None
    if not isinstance(doc, dict):
        raise CheckpointError(CHECKPOINT_INVALID, f"journal entry {where} is not an object")
    if key is not None:
        signature = doc.pop("s", None)
        expected = _sign(key, where, _encoder.encode(doc))
        if not isinstance(signature, str) or not hmac.compare_digest(signature, expected):
            raise CheckpointError(CHECKPOINT_SIGNATURE, f"journal entry {where} is not signed")
    doc.pop("s", None)
    try:
        return msgspec.convert(doc, Entry)
    except msgspec.ValidationError as exc:
        raise CheckpointError(CHECKPOINT_INVALID, f"journal entry {where}: {exc}") from None


def entry_reply(entry: Entry, effect: Effect) -> Any:
    """Return the reply ``entry`` recorded for ``effect``.

    Raises:
        CheckpointError: ``CHECKPOINT_INVALID`` when the entry is not for this effect (the
            agent changed since the run was journaled, so replaying it would not be exact).
    """
    if entry.n != effect_name(effect):
        raise CheckpointError(
            CHECKPOINT_INVALID,
            f"the journal holds {entry.k} {entry.n!r} where the run now asks for "
            f"{effect_name(effect)!r}: the agent changed",
        )
    try:
        match entry.k:
            case "model":
                return msgspec.convert(entry.v, Response)
            case "model_err":
                return msgspec.convert(entry.v, ModelError)
            case "tool_err":
                return msgspec.convert(entry.v, ToolError)
            case "tool" | "value":
                return entry.v
    except msgspec.ValidationError as exc:
        raise CheckpointError(CHECKPOINT_INVALID, f"journal entry: {exc}") from None
    raise CheckpointError(CHECKPOINT_INVALID, f"journal entry of unknown kind {entry.k!r}")
