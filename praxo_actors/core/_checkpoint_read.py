"""Read a checkpoint document back: decode it and revive its structs through the allowlist.

The rules are those of :mod:`praxo_actors.core._checkpoint`, which writes and signs them.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import msgspec

from praxo_actors._errors import CheckpointError
from praxo_actors.codes import CHECKPOINT_INVALID, CHECKPOINT_TYPE_NOT_ALLOWED
from praxo_actors.models import ImageBlock, Message, Role, Session, TextBlock, ToolCall

__all__: list[str] = []
_ROLES: dict[str, Role] = {
    "system": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}


def _decode(data: Any) -> dict[str, Any]:
    if not isinstance(data, bytes | bytearray | memoryview | str):
        raise _invalid(f"expected bytes or str, got {type(data).__name__}")
    try:
        doc = msgspec.json.decode(data)
    except (msgspec.MsgspecError, ValueError, RecursionError) as exc:
        # ValueError: a str holding lone surrogates; RecursionError: absurdly deep nesting.
        raise _invalid(f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise _invalid(f"expected a JSON object, got {_json_type(doc)}")
    return doc


def _revive_session(value: Any, allowed: Collection[str]) -> Session:
    doc = _struct(value, "session", allowed, required=("id",), optional=("messages", "metadata"))
    messages = [_revive_message(m, allowed) for m in _array(doc.get("messages", []), "messages")]
    metadata = doc.get("metadata", {})
    if not isinstance(metadata, dict):
        raise _invalid(f"session.metadata must be an object, got {_json_type(metadata)}")
    return Session(id=_str(doc["id"], "session.id"), messages=messages, metadata=metadata)


def _revive_message(value: Any, allowed: Collection[str]) -> Message:
    doc = _struct(
        value,
        "message",
        allowed,
        required=("role",),
        optional=("content", "tool_calls", "tool_call_id", "name"),
    )
    role = _ROLES.get(doc["role"]) if isinstance(doc["role"], str) else None
    if role is None:
        raise _invalid(f"message.role must be one of {sorted(_ROLES)}, got {doc['role']!r}")
    content: Any = doc.get("content", "")
    if not isinstance(content, str):
        content = [_revive_block(b, allowed) for b in _array(content, "message.content")]
    calls = [_revive_call(c, allowed) for c in _array(doc.get("tool_calls", []), "tool_calls")]
    return Message(
        role=role,
        content=content,
        tool_calls=calls,
        tool_call_id=_opt_str(doc.get("tool_call_id"), "message.tool_call_id"),
        name=_opt_str(doc.get("name"), "message.name"),
    )


def _revive_block(value: Any, allowed: Collection[str]) -> TextBlock | ImageBlock:
    tag = _tag(value, ("text", "image"), allowed)
    if tag == "text":
        doc = _struct(value, "text", allowed, required=("text",), optional=())
        return TextBlock(text=_str(doc["text"], "text.text"))
    doc = _struct(value, "image", allowed, required=("url",), optional=("media_type",))
    return ImageBlock(
        url=_str(doc["url"], "image.url"),
        media_type=_opt_str(doc.get("media_type"), "image.media_type"),
    )


def _revive_call(value: Any, allowed: Collection[str]) -> ToolCall:
    doc = _struct(value, "tool_call", allowed, required=("name", "arguments"), optional=("id",))
    arguments = doc["arguments"]
    if not isinstance(arguments, dict):
        raise _invalid(f"tool_call.arguments must be an object, got {_json_type(arguments)}")
    return ToolCall(
        name=_str(doc["name"], "tool_call.name"),
        arguments=arguments,
        id=_opt_str(doc.get("id"), "tool_call.id"),
    )


def _tag(value: Any, expected: tuple[str, ...], allowed: Collection[str]) -> str:
    """Return the tag of a struct object expected to be one of ``expected``."""
    if not isinstance(value, dict):
        raise _invalid(f"expected a {'/'.join(expected)} object, got {_json_type(value)}")
    tag = value.get("type")
    if not isinstance(tag, str):
        raise _invalid(f"a {'/'.join(expected)} object needs a str 'type' tag, got {tag!r}")
    if tag not in allowed:
        raise CheckpointError(CHECKPOINT_TYPE_NOT_ALLOWED, f"type {tag!r} is not allowed")
    if tag not in expected:
        raise _invalid(f"expected a {'/'.join(expected)} object, got type {tag!r}")
    return tag


def _struct(
    value: Any,
    tag: str,
    allowed: Collection[str],
    required: tuple[str, ...],
    optional: tuple[str, ...],
) -> dict[str, Any]:
    _tag(value, (tag,), allowed)
    doc: dict[str, Any] = value
    missing = [name for name in required if name not in doc]
    if missing:
        raise _invalid(f"{tag} lacks {missing}")
    unknown = sorted(set(doc) - {"type", *required, *optional})
    if unknown:
        raise _invalid(f"{tag} has unknown fields {unknown}")
    return doc


def _array(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _invalid(f"{where} must be an array, got {_json_type(value)}")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _invalid(f"{where} must be a string, got {_json_type(value)}")
    return value


def _opt_str(value: Any, where: str) -> str | None:
    return None if value is None else _str(value, where)


_JSON_TYPES: dict[type, str] = {
    type(None): "null",
    bool: "boolean",
    int: "number",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _invalid(message: str) -> CheckpointError:
    return CheckpointError(CHECKPOINT_INVALID, message)
