"""Write sessions as tagged JSON checkpoints and revive them through a type allowlist.

A checkpoint is one JSON object::

    {"format": "praxo.checkpoint", "version": 1, "session": {...}, "signature": "..."}

Every struct in ``session`` is a JSON object whose ``"type"`` field names it:

========== =========================== ==========================================================
tag        struct                      fields (``?``: may be omitted, then the default applies)
========== =========================== ==========================================================
session    :class:`~.models.Session`   ``id`` str, ``messages``? [message], ``metadata``? object
message    :class:`~.models.Message`   ``role`` system|user|assistant|tool, ``content``? str or
                                       [text|image], ``tool_calls``? [tool_call],
                                       ``tool_call_id``? str|null, ``name``? str|null
tool_call  :class:`~.models.ToolCall`  ``name`` str, ``arguments`` object, ``id``? str|null
text       :class:`~.models.TextBlock` ``text`` str
image      :class:`~.models.ImageBlock` ``url`` str, ``media_type``? str|null
========== =========================== ==========================================================

``metadata`` and ``arguments`` are plain JSON values: a ``"type"`` key inside them means nothing.
Loading decodes JSON into plain values and builds the model structs by hand from this table, so
nothing is ever imported, evaluated or unpickled, and an unknown field is refused.

Loading checks, in order: ``data`` is ``bytes``/``bytearray``/``memoryview`` holding UTF-8 or a
``str``, and holds one JSON object (else ``CHECKPOINT_INVALID``); with a key, the signature
(``CHECKPOINT_SIGNATURE``); ``format`` must be ``"praxo.checkpoint"`` and ``version`` the integer
1 — missing or anything else is ``CHECKPOINT_VERSION``; no top-level member other than ``format``,
``version``, ``session`` and ``signature``, and a ``session`` (``CHECKPOINT_INVALID``); then the
session, depth first in document order, each struct's tag before its fields: a tag outside
``allowed_types`` — including an unknown one — is ``CHECKPOINT_TYPE_NOT_ALLOWED``; a missing tag, a
tag in the wrong place (or an unknown tag that ``allowed_types`` names), an unknown or missing
field, or a value of the wrong type is ``CHECKPOINT_INVALID``.

The signature is the lowercase hex HMAC-SHA256, keyed with ``key``, of the canonical encoding of the
document without its ``"signature"`` member: compact JSON (no insignificant whitespace) with object
keys sorted by code point, UTF-8, only ``"``, ``\\`` and control characters escaped, floats in their
shortest round-trip form. ``dump_checkpoint`` writes this same canonical encoding.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Collection, Iterable
from typing import Any, Final

import msgspec

from praxo_actors._errors import CheckpointError
from praxo_actors.codes import (
    CHECKPOINT_INVALID,
    CHECKPOINT_SIGNATURE,
    CHECKPOINT_VERSION,
)
from praxo_actors.core._checkpoint_read import (
    _ROLES,
    _decode,
    _invalid,
    _json_type,
    _opt_str,
    _revive_session,
    _str,
)
from praxo_actors.core._json import MAX_ITEMS
from praxo_actors.models import ImageBlock, Message, Session, TextBlock, ToolCall

__all__ = ["DEFAULT_CHECKPOINT_TYPES", "dump_checkpoint", "load_checkpoint"]

FORMAT: Final = "praxo.checkpoint"
VERSION: Final = 1

#: Every tag a checkpoint of a :class:`~praxo_actors.models.Session` can hold.
DEFAULT_CHECKPOINT_TYPES: Final[frozenset[str]] = frozenset(
    {"session", "message", "tool_call", "text", "image"}
)

_HEADER_KEYS = frozenset({"format", "version", "session", "signature"})
_encoder = msgspec.json.Encoder(order="sorted")


def dump_checkpoint(
    session: Session,
    metadata_keys: Iterable[str] | None = None,
    key: bytes | None = None,
) -> bytes:
    """Return ``session`` as checkpoint bytes (canonical JSON, see the module docstring).

    Args:
        session: The session to write.
        metadata_keys: Metadata keys to keep (an allowlist); None keeps every key.
        key: When given, sign the document with HMAC-SHA256 under this key.

    Returns:
        UTF-8 JSON bytes that :func:`load_checkpoint` turns back into an equal session.

    Raises:
        CheckpointError: ``CHECKPOINT_INVALID`` when the session holds a value that is not JSON
            (e.g. a set, NaN or a non-str key in metadata or tool-call arguments) or a field of the
            wrong type.
        TypeError: ``session`` is not a Session, or ``key`` is not bytes.
        ValueError: ``key`` is empty.
    """
    if not isinstance(session, Session):
        raise TypeError(f"dump_checkpoint expects a Session, got {type(session).__name__}")
    _check_key(key)
    metadata = session.metadata
    if not isinstance(metadata, dict):
        raise _invalid(f"metadata must be a dict, got {type(metadata).__name__}")
    if metadata_keys is not None:
        if isinstance(metadata_keys, str):
            raise TypeError("metadata_keys must be a collection of keys, not a str")
        keep = set(metadata_keys)
        metadata = {name: value for name, value in metadata.items() if name in keep}
    try:
        doc: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "session": _session_doc(session, metadata),
        }
        # The written document must load again: building it checked every field that loading
        # checks (roles, strings, JSON values), so no second walk is needed.
        body = _encoder.encode(doc)
    except (RecursionError, ValueError, msgspec.MsgspecError) as exc:
        # RecursionError: absurdly deep nesting; ValueError: a str holding lone surrogates.
        raise _invalid(f"session cannot be written: {exc}") from None
    if key is None:
        return body
    doc["signature"] = _sign(key, body)
    return _encoder.encode(doc)


def load_checkpoint(
    data: bytes | bytearray | memoryview | str,
    allowed_types: Collection[str] = DEFAULT_CHECKPOINT_TYPES,
    key: bytes | None = None,
) -> Session:
    """Revive a session from checkpoint ``data``, reviving only tags in ``allowed_types``.

    Args:
        data: The checkpoint, as UTF-8 bytes or as a str.
        allowed_types: Tags that may be revived; the root ``session`` tag is checked too.
        key: When given, the checkpoint must carry a valid HMAC-SHA256 signature under this key,
            checked before anything is revived. Without a key nothing is verified.

    Returns:
        The session.

    Raises:
        CheckpointError: ``CHECKPOINT_INVALID``, ``CHECKPOINT_SIGNATURE``, ``CHECKPOINT_VERSION``
            or ``CHECKPOINT_TYPE_NOT_ALLOWED``, checked in the order the module docstring gives.
        TypeError: ``allowed_types`` is a str, or ``key`` is not bytes.
        ValueError: ``key`` is empty.
    """
    if isinstance(allowed_types, str):
        raise TypeError("allowed_types must be a collection of tags, not a str")
    _check_key(key)
    doc = _decode(data)
    if key is not None:
        _verify(doc, key)
    if doc.get("format") != FORMAT:
        raise CheckpointError(CHECKPOINT_VERSION, f"unknown format {doc.get('format')!r:.80}")
    version = doc.get("version")
    if type(version) is not int or version != VERSION:
        raise CheckpointError(CHECKPOINT_VERSION, f"unknown version {version!r:.80}")
    extra = sorted(set(doc) - _HEADER_KEYS)
    if extra:
        raise CheckpointError(CHECKPOINT_INVALID, f"unknown top-level fields {extra}")
    if "session" not in doc:
        raise CheckpointError(CHECKPOINT_INVALID, "no session")
    return _revive_session(doc["session"], allowed_types)


# --- writing -------------------------------------------------------------------------------------


def _session_doc(session: Session, metadata: Any) -> dict[str, Any]:
    return {
        "type": "session",
        "id": _str(session.id, "session.id"),
        "messages": [_message_doc(m) for m in _list(session.messages, "messages")],
        "metadata": _json_copy(metadata, "metadata"),
    }


def _message_doc(message: Any) -> dict[str, Any]:
    if (
        type(message) is Message
        and type(message.content) is str
        and type(message.tool_calls) is list
        and not message.tool_calls
        and message.tool_call_id is None
        and message.name is None
        and type(message.role) is str
        and message.role in _ROLES
    ):
        # A plain text message (most of a log): the same document without the checks' calls,
        # a third of what a run's record costs to build.
        return {
            "type": "message",
            "role": message.role,
            "content": message.content,
            "tool_calls": [],
            "tool_call_id": None,
            "name": None,
        }
    if not isinstance(message, Message):
        raise _invalid(f"messages must hold Message, got {type(message).__name__}")
    content = message.content
    role = message.role
    if not isinstance(role, str) or role not in _ROLES:
        raise _invalid(f"message.role must be one of {sorted(_ROLES)}, got {role!r}")
    return {
        "type": "message",
        "role": role,
        "content": content
        if isinstance(content, str)
        else [_block_doc(b) for b in _list(content, "content")],
        "tool_calls": [_call_doc(c) for c in _list(message.tool_calls, "tool_calls")],
        "tool_call_id": _opt_str(message.tool_call_id, "message.tool_call_id"),
        "name": _opt_str(message.name, "message.name"),
    }


def _block_doc(block: Any) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": _str(block.text, "text.text")}
    if isinstance(block, ImageBlock):
        return {
            "type": "image",
            "url": _str(block.url, "image.url"),
            "media_type": _opt_str(block.media_type, "image.media_type"),
        }
    raise _invalid(f"content must hold TextBlock or ImageBlock, got {type(block).__name__}")


def _call_doc(call: Any) -> dict[str, Any]:
    if not isinstance(call, ToolCall):
        raise _invalid(f"tool_calls must hold ToolCall, got {type(call).__name__}")
    arguments = _json_copy(call.arguments, "arguments")
    if not isinstance(arguments, dict):
        raise _invalid(f"tool_call.arguments must be an object, got {_json_type(arguments)}")
    return {
        "type": "tool_call",
        "name": _str(call.name, "tool_call.name"),
        "arguments": arguments,
        "id": _opt_str(call.id, "tool_call.id"),
    }


def _list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise _invalid(f"{field} must be a list, got {type(value).__name__}")
    return value


def _json_copy(value: Any, where: str) -> Any:
    """Return a copy of the JSON value ``value``; raise ``CHECKPOINT_INVALID`` for anything else.

    A container met twice is copied once and its copy shared, and the values written out are
    counted: one that shares a container many times is refused past ``MAX_ITEMS`` instead of
    being written out exponentially.
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    done: dict[int, tuple[Any, int]] = {}  # id -> (copy, values written out)
    count = [0]

    def copy(item: Any) -> Any:
        if item is None or isinstance(item, bool | int | str):
            count[0] += 1
            return item
        if isinstance(item, float):
            if not math.isfinite(item):
                raise _invalid(f"{where} holds {item!r}, which JSON cannot represent")
            count[0] += 1
            return item
        seen = done.get(id(item))
        if seen is not None:
            count[0] += seen[1]
            if count[0] > MAX_ITEMS:
                raise _invalid(f"{where} writes out more than {MAX_ITEMS:,} values")
            return seen[0]
        start = count[0]
        out: Any
        if isinstance(item, list):
            out = [copy(child) for child in item]
        elif isinstance(item, dict):
            out = {}
            for name, child in item.items():
                if not isinstance(name, str):
                    raise _invalid(f"{where} holds a non-str key {name!r}")
                out[name] = copy(child)
        else:
            raise _invalid(f"{where} holds a {type(item).__name__}, which is not a JSON value")
        count[0] += 1
        done[id(item)] = (out, count[0] - start)
        return out

    return copy(value)


# --- signing -------------------------------------------------------------------------------------


def _check_key(key: Any) -> None:
    if key is None:
        return
    if not isinstance(key, bytes):
        raise TypeError(f"key must be bytes, got {type(key).__name__}")
    if not key:
        raise ValueError("key must not be empty")


def _sign(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def _verify(doc: dict[str, Any], key: bytes) -> None:
    signature = doc.get("signature")
    if not isinstance(signature, str):
        raise CheckpointError(CHECKPOINT_SIGNATURE, "checkpoint is not signed")
    unsigned = {name: value for name, value in doc.items() if name != "signature"}
    try:
        body = _encoder.encode(unsigned)
    except (msgspec.MsgspecError, ValueError, RecursionError):
        raise CheckpointError(CHECKPOINT_SIGNATURE, "checkpoint cannot be verified") from None
    expected = _sign(key, body)
    if not hmac.compare_digest(signature.encode("utf-8"), expected.encode("ascii")):
        raise CheckpointError(CHECKPOINT_SIGNATURE, "signature does not match")
