"""A tool call from a decoded value: its name and arguments checked; canonical JSON documents.

Shared by :mod:`praxo_actors.core._toolcalls` and the model families' formats in
:mod:`praxo_actors.core._formats` (which the former loads on first use).
"""

from __future__ import annotations

import re
from typing import Any

from praxo_actors._errors import JSONError, ToolCallError
from praxo_actors.codes import (
    TOOL_CALL_INVALID_ARGUMENTS,
    TOOL_CALL_INVALID_NAME,
    TOOL_CALL_MALFORMED,
)
from praxo_actors.core._json import _fence_body, parse_json, try_parse_json
from praxo_actors.models import ToolCall

__all__ = ["MAX_NAME_LENGTH"]

#: Longest tool name accepted (the limit common to model providers).
MAX_NAME_LENGTH = 64
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*")
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_SPACES = re.compile(r"\s*")


def _canonical(text: str) -> tuple[int, int, list[ToolCall]] | None:
    """Read ``text`` as one JSON document; return its span and calls, or None if it is not."""
    for start in dict.fromkeys((0, _reasoning_end(text))):
        document = text[start:].strip()
        if document.startswith("```"):
            document = _fence_body(document) or ""
        found, value = try_parse_json(document)
        if not found:
            continue
        return start, len(text), _calls_in_document(value)
    return None


def _reasoning_end(text: str) -> int:
    """Return where the text after its leading reasoning begins."""
    pos = _orphan_reasoning_end(text)
    while True:
        pos = _SPACES.match(text, pos).end()  # type: ignore[union-attr]
        if not text.startswith(_THINK_OPEN, pos):
            return pos
        close = text.find(_THINK_CLOSE, pos)
        if close < 0:
            return len(text)
        pos = close + len(_THINK_CLOSE)


def _calls_in_document(value: Any) -> list[ToolCall]:
    if isinstance(value, dict) and _is_call_object(value):
        return [_call_from_object(value)]
    if isinstance(value, list) and value and all(_is_call_object(item) for item in value):
        return [_call_from_object(item) for item in value]
    return []


def _is_call_object(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and "name" in value
        and ("arguments" in value or "parameters" in value)
    )


def _orphan_reasoning_end(text: str) -> int:
    """Return the end of a ``</think>`` that comes before any ``<think>``, else 0."""
    close, opening = text.find(_THINK_CLOSE), text.find(_THINK_OPEN)
    return close + len(_THINK_CLOSE) if close >= 0 and (opening < 0 or close < opening) else 0


def _detached(exc: ToolCallError) -> ToolCallError:
    """Drop what a caught error holds on to, before it is kept in a list of findings.

    Its traceback holds the frames that raised it, and its context the JSONError (with frames
    of its own): kept for every broken line of a long text, they made the garbage collector walk
    an ever larger heap, 30 microseconds a line. ``raise`` gives it a fresh traceback.
    """
    exc.__traceback__ = None
    exc.__context__ = None
    return exc


def _call_from_object(value: dict[str, Any], id_: str | None = None) -> ToolCall:
    """Build a call from ``{"name": …, "arguments": …, "id"?: …}``."""
    name = value.get("name")
    if not isinstance(name, str):
        raise ToolCallError(TOOL_CALL_INVALID_NAME, f"name must be a string, got {name!r}")
    name = _checked_name(name)
    arguments = _arguments(
        value["arguments"] if "arguments" in value else value.get("parameters", {})
    )
    identifier = value.get("id") if id_ is None else id_
    if identifier is not None and not isinstance(identifier, str):
        raise ToolCallError(TOOL_CALL_MALFORMED, f"id must be a string, got {identifier!r}")
    return ToolCall(name=name, arguments=arguments, id=identifier)


def _checked_name(name: str) -> str:
    if len(name) > MAX_NAME_LENGTH:
        raise ToolCallError(
            TOOL_CALL_INVALID_NAME, f"name longer than {MAX_NAME_LENGTH} characters"
        )
    if _NAME.fullmatch(name) is None:
        raise ToolCallError(TOOL_CALL_INVALID_NAME, f"invalid tool name {name!r}")
    return name


def _arguments(value: Any) -> dict[str, Any]:
    """Return the arguments object; a JSON string holding an object is decoded."""
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            value = parse_json(value)
        except JSONError:
            raise ToolCallError(
                TOOL_CALL_INVALID_ARGUMENTS, "arguments string is not a JSON object"
            ) from None
    if not isinstance(value, dict):
        raise ToolCallError(
            TOOL_CALL_INVALID_ARGUMENTS,
            f"arguments must be an object, got {type(value).__name__}",
        )
    return value
