"""Every named format by name, and parsing and stripping with one of them."""

from __future__ import annotations

from praxo_actors._errors import ToolCallError
from praxo_actors.core._formats import (
    _gemma,
    _harmony,
    _json_tags,
    _prose_json,
    _pythonic,
    _token_sections,
    _xml_params,
)
from praxo_actors.core._formats._auto import choose_format
from praxo_actors.core._formats._names import AUTO, FORMAT_NAMES
from praxo_actors.core._formats._scan import Format, scan
from praxo_actors.models import ToolCall

__all__ = ["FORMATS", "parse_named", "strip_named"]

FORMATS: dict[str, Format] = {
    fmt.name: fmt
    for module in (_json_tags, _token_sections, _xml_params, _pythonic, _prose_json, _harmony)
    for fmt in module.FORMATS
} | {fmt.name: fmt for fmt in _gemma.FORMATS}

if set(FORMATS) != set(FORMAT_NAMES):  # pragma: no cover - a table and its modules disagree
    raise ImportError(f"formats without a reader: {set(FORMAT_NAMES) ^ set(FORMATS)}")


def parse_named(text: str, name: str) -> list[ToolCall] | None:
    """Return the calls of ``text`` in format ``name``; None when ``"auto"`` picks the default.

    Raises:
        ToolCallError: The first error in text order.
    """
    if name == AUTO:
        chosen = choose_format(text)
        if chosen is None:
            return None
        name = chosen
    calls: list[ToolCall] = []
    for section in scan(FORMATS[name], text, until_error=True):
        if isinstance(section.outcome, ToolCallError):
            raise section.outcome
        calls.extend(section.outcome)
    return calls


def strip_named(text: str, name: str) -> str | None:
    """Return ``text`` without the markup of its calls; None when ``"auto"`` picks the default."""
    if name == AUTO:
        chosen = choose_format(text)
        if chosen is None:
            return None
        name = chosen
    parts, pos = [], 0
    for section in scan(FORMATS[name], text):
        if not isinstance(section.outcome, ToolCallError):
            parts.append(text[pos : section.start])
            pos = section.end
    parts.append(text[pos:])
    return "".join(parts).strip()
