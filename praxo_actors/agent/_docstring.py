"""What a tool function's docstring says: its description, and each parameter's.

The description is the first paragraph. Parameters are read from a Google-style ``Args:`` (or
``Arguments:``, ``Parameters:``) section — ``name: text`` or ``name (type): text``, continued on
more deeply indented lines — and from reST ``:param name: text`` fields.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["describe"]

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:\s*$")
_ITEM = re.compile(r"^\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_FIELD = re.compile(r"^:param\s+(?:[^:]*\s)?([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")


def describe(doc: str | None) -> tuple[str, dict[str, str]]:
    """Return a docstring's first paragraph (lines joined) and its parameter descriptions."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    for line in lines:
        text = line.strip()
        if not text or _SECTION.match(text) or text.startswith(":param"):
            break
        summary.append(text)
    params = _google(lines)
    params.update((k, v) for k, v in _fields(lines).items() if k not in params)
    return " ".join(summary), params


def _google(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    inside = False
    item_indent: int | None = None
    current: str | None = None
    for line in lines:
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        if not inside:
            inside = bool(_SECTION.match(text)) and indent == 0
            continue
        if not text:
            current = None
            continue
        if indent == 0:  # the section ended (a new section, or prose)
            inside, current, item_indent = bool(_SECTION.match(text)), None, None
            continue
        match = _ITEM.match(text)
        if match and (item_indent is None or indent <= item_indent):
            item_indent = indent
            current = match.group(1)
            found[current] = match.group(2).strip()
        elif current is not None:  # a continuation line of the current item
            found[current] = f"{found[current]} {text}".strip()
    return found


def _fields(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    current: str | None = None
    for line in lines:
        text = line.strip()
        match = _FIELD.match(text)
        if match:
            current = match.group(1)
            found[current] = match.group(2).strip()
        elif current is not None and text and not text.startswith(":") and line[:1].isspace():
            found[current] = f"{found[current]} {text}".strip()
        else:
            current = None
    return found
