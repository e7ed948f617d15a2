"""Formats whose calls are plain JSON in prose: Llama 3.x JSON calls and xLAM.

- ``llama3_json`` (Llama 3.1–3.3): a call object ``{"name": …, "parameters" | "arguments": …}``
  anywhere in the text, several separated by ``;``, optionally after ``<|python_tag|>``; the
  built-in tools' ``<|python_tag|>brave_search.call(query="…")``; and the custom-tool form
  ``<function=NAME>{…}</function>``.
- ``xlam``: a JSON array of call objects (or one object) anywhere in the text, in a
  ```` ```json ```` fence, after ``[TOOL_CALLS]`` or inside ``<tool_call>…</tool_call>``.

A JSON document in prose is a call when it is a call object (``name`` with ``arguments`` or
``parameters``, as in canonical JSON) or, for xLAM, a non-empty array of them; any other JSON is
part of the answer and is skipped whole, so a call inside it is data. An object that begins
``{"name":`` but does not parse is ``TOOL_CALL_INVALID_JSON``; an array mixing calls and other
values is ``TOOL_CALL_MALFORMED``.
"""

from __future__ import annotations

import re
from typing import Any

from praxo_actors._errors import ToolCallError
from praxo_actors.codes import TOOL_CALL_INVALID_JSON, TOOL_CALL_MALFORMED
from praxo_actors.core._call_values import _call_from_object, _is_call_object
from praxo_actors.core._formats._pythonic import python_call
from praxo_actors.core._formats._scan import (
    Format,
    Section,
    Text,
    arguments_body,
    attempt,
    call,
    calls_in_value,
    closer_pattern,
    error,
    find_outside_strings,
    json_calls,
    read_json_value,
    skip_spaces,
)
from praxo_actors.core._json import try_parse_json
from praxo_actors.models import ToolCall

__all__ = ["FORMATS"]

_LOOKS_LIKE_CALL = re.compile(r'\[?\s*\{\s*"name"\s*:')
# A call object cut off before its "name": a reply that ran out of tokens while writing a call.
_CUT_CALL = re.compile(r'\[?\s*\{\s*"(?:n(?:a(?:m(?:e(?:"\s*)?)?)?)?)?\Z')
_SEMICOLON = re.compile(r"\s*;")
_SEPARATOR = re.compile(r"\s*;(?=\s*\{)")
_BUILTIN = re.compile(r"([A-Za-z_][\w]*)\.call\s*(?=\()")
_FUNCTION_TAG = re.compile(r"<function=([^>\n]*)>")
_FUNCTION_CLOSE = closer_pattern("</function>")
_TOOL_CALL_CLOSE = closer_pattern("</tool_call>")
_FENCE_CLOSE = re.compile(r"^[ \t]*```[ \t]*$", re.MULTILINE)


def _calls_of(value: Any, *, arrays: bool) -> list[ToolCall] | None:
    """Return the calls a JSON document in prose holds, or None when it is an answer."""
    if isinstance(value, dict):
        return [_call_from_object(value)] if _is_call_object(value) else None
    if not (arrays and isinstance(value, list) and value):
        return None
    marks = [_is_call_object(item) for item in value]
    if not any(marks):
        return None
    if not all(marks):
        raise ToolCallError(TOOL_CALL_MALFORMED, "an array mixes calls and other values")
    return [_call_from_object(item) for item in value]


def _candidate(source: Text, start: int, *, arrays: bool) -> tuple[Section | None, int]:
    """Read the JSON container at ``start`` as calls, an answer to skip, or an error."""
    text = source.text
    looks_like_call = _LOOKS_LIKE_CALL.match(text, start) is not None
    end = source.json.end(start)
    if end is None:
        if looks_like_call or _CUT_CALL.match(text, start) is not None:
            return error(start, len(text), TOOL_CALL_INVALID_JSON, "unbalanced brackets")
        return None, start + 1
    found, value = try_parse_json(text[start:end])
    if not found:
        if looks_like_call:
            return error(start, end, TOOL_CALL_INVALID_JSON, value)
        return None, start + 1
    try:
        calls = _calls_of(value, arrays=arrays)
    except ToolCallError as exc:
        return Section(start, end, exc), end
    if calls is None:
        return None, end
    separator = None if arrays else _SEPARATOR.match(text, end)
    if separator is not None:  # the ";" between two Llama calls is markup too
        end = separator.end()
    return Section(start, end, calls), end


def _python_tag(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
    text, start = source.text, match.start()
    pos = skip_spaces(text, match.end())
    builtin = _BUILTIN.match(text, pos)
    if builtin is not None:
        end = source.python.end(builtin.end())
        if end is None:
            return error(start, len(text), TOOL_CALL_MALFORMED, "unclosed built-in call")
        expression = text[pos:end]
        return attempt(start, end, lambda: [python_call(expression, method="call")]), end
    if not text.startswith("{", pos):
        return None, match.end()  # code for the interpreter, or prose
    calls, failure = [], None
    while True:
        try:
            value, end = read_json_value(source, pos)
            if not isinstance(value, dict):
                raise ToolCallError(TOOL_CALL_MALFORMED, "expected a call object")
            calls.append(_call_from_object(value))
        except ToolCallError as exc:
            failure = exc
            break
        pos = end
        semicolon = _SEMICOLON.match(text, pos)
        if semicolon is None or not text.startswith("{", skip_spaces(text, semicolon.end())):
            break
        pos = skip_spaces(text, semicolon.end())
    if failure is not None:
        return Section(start, len(text), failure), len(text)
    return Section(start, pos, calls), pos


def _function_tag(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
    text = source.text
    found = find_outside_strings(text, match.end(), _FUNCTION_CLOSE)
    if found is None:
        return error(match.start(), len(text), TOOL_CALL_MALFORMED, "no </function>")
    name, body = match.group(1).strip(), text[match.end() : found.start()]
    return attempt(match.start(), found.end(), lambda: [call(name, arguments_body(body))]), (
        found.end()
    )


def _read_llama(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
    token = match.group()
    if token == "<|python_tag|>":
        return _python_tag(source, match)
    if token.startswith("<function="):
        return _function_tag(source, match)
    return _candidate(source, match.start(), arrays=False)


def _fence(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
    text = source.text
    close = _FENCE_CLOSE.search(text, match.end())
    if close is None:
        return None, match.end()
    body = text[match.end() : close.start()]
    found, value = try_parse_json(body)
    if not found:
        if _LOOKS_LIKE_CALL.match(body.lstrip()) is not None:
            return error(match.start(), close.end(), TOOL_CALL_INVALID_JSON, value)
        return None, close.end()
    try:
        calls = _calls_of(value, arrays=True)
    except ToolCallError as exc:
        return Section(match.start(), close.end(), exc), close.end()
    if calls is None:
        return None, close.end()
    return Section(match.start(), close.end(), calls), close.end()


def _read_xlam(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
    token, text = match.group(), source.text
    if token == "[TOOL_CALLS]":
        try:
            value, end = read_json_value(source, match.end())
        except ToolCallError as exc:
            return Section(match.start(), len(text), exc), len(text)
        return attempt(match.start(), end, lambda: calls_in_value(value)), end
    if token == "<tool_call>":
        found = find_outside_strings(text, match.end(), _TOOL_CALL_CLOSE)
        if found is None:
            return error(match.start(), len(text), TOOL_CALL_MALFORMED, "no </tool_call>")
        body = text[match.end() : found.start()]
        return attempt(match.start(), found.end(), lambda: json_calls(body)), found.end()
    if token.startswith("```"):
        return _fence(source, match)
    return _candidate(source, match.start(), arrays=True)


FORMATS = (
    Format.build("llama3_json", r'<\|python_tag\|>|<function=([^>\n]*)>|\{(?=\s*")', _read_llama),
    Format.build(
        "xlam",
        r'\[TOOL_CALLS\]|<tool_call>|```(?:json)?[ \t]*\n|\[(?=\s*\{)|\{(?=\s*")',
        _read_xlam,
    ),
)
