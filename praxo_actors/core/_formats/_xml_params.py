"""Formats that write each argument in a tag of its own: Qwen3-Coder, Seed-OSS, MiniMax-M2, GLM.

- ``qwen3_coder``: ``<tool_call><function=NAME><parameter=KEY>VALUE</parameter>…</function>
  </tool_call>``; ``seed_oss``: the same inside ``<seed:tool_call>…</seed:tool_call>``.
- ``minimax_m2``: ``<minimax:tool_call><invoke name="NAME"><parameter name="KEY">VALUE
  </parameter>…</invoke>…</minimax:tool_call>``.
- ``glm45`` (GLM-4.5, 4.6, 4.7): ``<tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE
  </arg_value>…</tool_call>``.

Values are raw text; the schema that would type them is not part of the text, so a value that
is a JSON document (``3``, ``true``, ``{"a": 1}``, ``"quoted"``) becomes that JSON value and any
other value stays a string. The Qwen3-Coder and Seed-OSS templates write a value that is not a
string with Jinja's ``string`` filter, that is as Python writes it, so there Python's spellings
count too (``True``, ``None``; Seed-OSS's ``{'a': [1, True]}``, read as a literal only).

Newlines the template puts around a value are layout, not the value's own: Qwen3-Coder writes
``<parameter=KEY>\nVALUE\n</parameter>``, so one newline after the opening tag and one before
the closing tag are dropped. Seed-OSS's template, GLM's and MiniMax-M2's write the value right
against its tags, so its own leading or trailing newlines are kept; for Seed-OSS a newline at
both ends is still taken for Qwen-style layout, the one form its models are also seen to write.
The markup is read in order, so a closing tag inside a value ends only that value; every tag
must be closed (``TOOL_CALL_MALFORMED``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from praxo_actors._errors import ToolCallError
from praxo_actors.codes import TOOL_CALL_MALFORMED
from praxo_actors.core._call_values import _detached
from praxo_actors.core._formats._pythonic import python_literal
from praxo_actors.core._formats._scan import Format, Reader, Section, Text, call, skip_spaces
from praxo_actors.core._json import try_parse_json
from praxo_actors.models import ToolCall

__all__ = ["FORMATS", "LAYOUT_NEWLINES", "NO_NEWLINES", "PAIRED_NEWLINES", "raw_value"]

_FUNCTION = re.compile(r"<function=([^>\n]*)>")
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>")
_INVOKE = re.compile(r"""<invoke\s+name\s*=\s*(?:"([^"<\n]*)"|'([^'<\n]*)'|([^\s>]+))\s*>""")
_M2_PARAMETER = re.compile(
    r"""<parameter\s+name\s*=\s*(?:"([^"<\n]*)"|'([^'<\n]*)'|([^\s>]+))\s*>"""
)
_GLM_NAME = re.compile(r"[^<\n]*")


#: How each format lays a value out between its tags (see the module's docstring).
LAYOUT_NEWLINES = "each"  # one newline after the opening tag, one before the closing tag
PAIRED_NEWLINES = "paired"  # a newline at both ends, or none
NO_NEWLINES = "none"
_PYTHON_NAMES = {"True": True, "False": False, "None": None}


def raw_value(text: str, layout: str = LAYOUT_NEWLINES, *, python: bool = False) -> Any:
    """Return a raw argument value: the JSON value it spells, else the text itself.

    Args:
        text: What stands between the value's tags.
        layout: Which newlines around it are the template's layout, not the value's.
        python: Read Python's spellings of non-string values too.
    """
    leading, trailing = text.startswith("\n"), text.endswith("\n") and len(text) > 1
    if layout == LAYOUT_NEWLINES or (layout == PAIRED_NEWLINES and leading and trailing):
        text = text[1:] if leading else text
        text = text[:-1] if trailing else text
    found, value = try_parse_json(text)
    if found and text.strip():
        return value
    return _python_value(text) if python else text


def _python_value(text: str) -> Any:
    """Return the literal ``text`` spells in Python, else ``text`` itself."""
    token = text.strip()
    if token in _PYTHON_NAMES:
        return _PYTHON_NAMES[token]
    if token[:1] in ("{", "[") and token[-1:] in ("}", "]"):
        try:
            return python_literal(token)
        except ToolCallError:
            return text
    return text


class _Reader:
    """Read ordered markup at a position; every expectation failed is ``TOOL_CALL_MALFORMED``."""

    __slots__ = ("pos", "text")

    def __init__(self, text: str, pos: int) -> None:
        self.text, self.pos = text, pos

    def at(self, literal: str) -> bool:
        """Skip spaces; consume ``literal`` if it is next and say whether it was."""
        self.pos = skip_spaces(self.text, self.pos)
        if self.text.startswith(literal, self.pos):
            self.pos += len(literal)
            return True
        return False

    def expect(self, literal: str) -> None:
        if not self.at(literal):
            raise ToolCallError(TOOL_CALL_MALFORMED, f"expected {literal}")

    def tag(self, pattern: re.Pattern[str]) -> str | None:
        """Skip spaces; consume an opening tag matching ``pattern``; return its first group."""
        self.pos = skip_spaces(self.text, self.pos)
        found = pattern.match(self.text, self.pos)
        if found is None:
            return None
        self.pos = found.end()
        return next((group for group in found.groups() if group is not None), "")

    def until(self, closing: str) -> str:
        """Return the raw text up to ``closing`` and consume both."""
        end = self.text.find(closing, self.pos)
        if end < 0:
            raise ToolCallError(TOOL_CALL_MALFORMED, f"no {closing}")
        value = self.text[self.pos : end]
        self.pos = end + len(closing)
        return value


ValueReader = Callable[[str], Any]


def _pairs(
    reader: _Reader, opening: re.Pattern[str], closing: str, value: ValueReader
) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    while (key := reader.tag(opening)) is not None:
        arguments[_key(key)] = value(reader.until(closing))
    return arguments


def _key(key: str) -> str:
    key = key.strip()
    if not key:
        raise ToolCallError(TOOL_CALL_MALFORMED, "a parameter has no name")
    return key


def _functions(reader: _Reader, close: str, value: ValueReader) -> list[ToolCall]:
    """Read ``(<function=…>…</function>)+`` then ``close``."""
    calls = []
    while (name := reader.tag(_FUNCTION)) is not None:
        arguments = _pairs(reader, _PARAMETER, "</parameter>", value)
        reader.expect("</function>")
        calls.append(call(name.strip(), arguments))
    if not calls:
        raise ToolCallError(TOOL_CALL_MALFORMED, "expected <function=NAME>")
    reader.expect(close)
    return calls


def _invokes(reader: _Reader) -> list[ToolCall]:
    calls = []
    while (name := reader.tag(_INVOKE)) is not None:
        arguments = _pairs(reader, _M2_PARAMETER, "</parameter>", _unlaid)
        reader.expect("</invoke>")
        calls.append(call(name.strip(), arguments))
    if not calls:
        raise ToolCallError(TOOL_CALL_MALFORMED, 'expected <invoke name="NAME">')
    reader.expect("</minimax:tool_call>")
    return calls


def _glm(reader: _Reader) -> list[ToolCall]:
    name = _GLM_NAME.match(reader.text, reader.pos).group()  # type: ignore[union-attr]
    reader.pos += len(name)
    arguments: dict[str, Any] = {}
    while reader.at("<arg_key>"):
        key = _key(reader.until("</arg_key>"))
        reader.expect("<arg_value>")
        arguments[key] = _unlaid(reader.until("</arg_value>"))
    reader.expect("</tool_call>")
    return [call(name.strip(), arguments)]


def _ordered(read_calls: Callable[[_Reader], list[ToolCall]]) -> Reader:
    def read(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
        reader = _Reader(source.text, match.end())
        try:
            calls = read_calls(reader)
        except ToolCallError as exc:
            if exc.code == "TOOL_CALL_MALFORMED":
                # Markup that does not close swallows the rest of the text: scanning ends here.
                return Section(match.start(), len(source.text), _detached(exc)), len(source.text)
            return Section(match.start(), reader.pos, _detached(exc)), reader.pos
        return Section(match.start(), reader.pos, calls), reader.pos

    return read


def _qwen(text: str) -> Any:
    return raw_value(text, LAYOUT_NEWLINES, python=True)


def _seed(text: str) -> Any:
    return raw_value(text, PAIRED_NEWLINES, python=True)


def _unlaid(text: str) -> Any:
    return raw_value(text, NO_NEWLINES)


FORMATS = (
    Format.build(
        "qwen3_coder", r"<tool_call>", _ordered(lambda r: _functions(r, "</tool_call>", _qwen))
    ),
    Format.build(
        "seed_oss",
        r"<seed:tool_call>",
        _ordered(lambda r: _functions(r, "</seed:tool_call>", _seed)),
    ),
    Format.build("minimax_m2", r"<minimax:tool_call>", _ordered(_invokes)),
    Format.build("glm45", r"<tool_call>", _ordered(_glm)),
)
