"""Formats that wrap JSON calls in a marker: a tag pair, or an opening token and one JSON value.

| format | markup |
|---|---|
| ``hermes`` | ``<tool_call>{…}</tool_call>``, one or more objects (or an array) per tag |
| ``granite`` | ``<|tool_call|>[{…}]`` (Granite 3.0), ``<tool_call>[{…}]`` (3.1+); no closing tag |
| ``granite_20b_fc`` | ``<function_call> {…}``, one marker per call |
| ``internlm`` | ``<|action_start|><|plugin|>{…}<|action_end|>`` |
| ``jamba``, ``hunyuan_a13b``, ``minimax`` | ``<tool_calls>[{…}]</tool_calls>``, or objects |
| ``phi4_mini_json``, ``firefunction_v2`` | ``functools[{…}, …]`` |
| ``command_r7b`` | ``<|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]`` … |
| ``nemotron_v2`` | ``<TOOLCALL>[{…}]</TOOLCALL>`` |
| ``apertus`` | ``<|tools_prefix|>[{"name": {…arguments}}]<|tools_suffix|>`` |

Bodies between a tag pair end at the first closing tag outside JSON strings; a
missing closing tag is ``TOOL_CALL_MALFORMED``. A call object needs a ``name``; missing
arguments mean ``{}``.
"""

from __future__ import annotations

import re
from typing import Any

from praxo_actors._errors import ToolCallError
from praxo_actors.codes import TOOL_CALL_INVALID_NAME, TOOL_CALL_MALFORMED
from praxo_actors.core._formats._scan import (
    Format,
    ObjectReader,
    Reader,
    Section,
    Text,
    attempt,
    call,
    calls_in_value,
    closer_pattern,
    error,
    find_outside_strings,
    json_calls,
    read_json_value,
    skip_spaces,
    standard_object,
)

__all__ = ["FORMATS"]


def _cohere_object(value: dict[str, Any]) -> Any:
    """Read Command R7B's ``{"tool_call_id", "tool_name", "parameters"}``."""
    name = value.get("tool_name")
    if not isinstance(name, str):
        raise ToolCallError(TOOL_CALL_INVALID_NAME, f"tool_name must be a string, got {name!r}")
    identifier = value.get("tool_call_id")
    if identifier is not None and not isinstance(identifier, str):
        identifier = str(identifier) if isinstance(identifier, int) else None
        if identifier is None:
            raise ToolCallError(TOOL_CALL_MALFORMED, "tool_call_id must be a string")
    return call(name, value.get("parameters", {}), identifier)


def _apertus_object(value: dict[str, Any]) -> Any:
    """Read Apertus's ``{"name": {…arguments}}``: exactly one key."""
    if len(value) != 1:
        raise ToolCallError(TOOL_CALL_MALFORMED, "expected one {name: arguments} pair")
    ((name, arguments),) = value.items()
    return call(name, arguments)


def _tag_pair(close: str, read_object: ObjectReader = standard_object) -> Reader:
    """Return a reader for a body between the marker and ``close``."""
    closer = closer_pattern(close)

    def read(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
        text = source.text
        found = find_outside_strings(text, match.end(), closer)
        if found is None:
            return error(match.start(), len(text), TOOL_CALL_MALFORMED, f"no {close}")
        body = text[match.end() : found.start()]
        return attempt(match.start(), found.end(), lambda: json_calls(body, read_object)), (
            found.end()
        )

    return read


def _one_value(trailer: str | None = None) -> Reader:
    """Return a reader for the one JSON value after the marker (and an optional ``trailer``)."""

    def read(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
        text = source.text
        try:
            value, end = read_json_value(source, match.end())
        except ToolCallError as exc:
            return Section(match.start(), len(text), exc), len(text)
        if trailer is not None:
            after = skip_spaces(text, end)
            if text.startswith(trailer, after):
                end = after + len(trailer)
        return attempt(match.start(), end, lambda: calls_in_value(value)), end

    return read


_TOOL_CALLS = _tag_pair("</tool_calls>")

FORMATS = (
    Format.build("hermes", r"<tool_call>", _tag_pair("</tool_call>")),
    Format.build(
        "granite", r"<\|tool_call\|>|<tool_call>(?=\s*\[)", _one_value(trailer="</tool_call>")
    ),
    Format.build("granite_20b_fc", r"<function_call>", _one_value()),
    Format.build("internlm", r"<\|action_start\|>\s*<\|plugin\|>", _tag_pair("<|action_end|>")),
    Format.build("jamba", r"<tool_calls>", _TOOL_CALLS),
    Format.build("hunyuan_a13b", r"<tool_calls>", _TOOL_CALLS),
    Format.build("minimax", r"<tool_calls>", _TOOL_CALLS),
    Format.build("phi4_mini_json", r"functools(?=\[)", _one_value()),
    Format.build("firefunction_v2", r"functools(?=\[)", _one_value()),
    Format.build("command_r7b", r"<\|START_ACTION\|>", _tag_pair("<|END_ACTION|>", _cohere_object)),
    Format.build("nemotron_v2", r"<TOOLCALL>", _tag_pair("</TOOLCALL>")),
    Format.build("apertus", r"<\|tools_prefix\|>", _tag_pair("<|tools_suffix|>", _apertus_object)),
)
