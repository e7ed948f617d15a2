"""FunctionGemma (``functiongemma``): ``<start_function_call>call:NAME{k:v,…}<end_function_call>``.

Values: a string between two ``<escape>`` tokens (anything but ``<escape>`` inside), an object
``{key:value,…}``, a list ``[value,…]``, or a bare token (up to ``,``, ``}`` or ``]``) that is a
JSON number, ``true``, ``false`` or ``null``, else a string. Keys are bare. The closing token
may be missing only at the end of the text (the template stops generation after a call). A
body that does not follow this grammar is ``TOOL_CALL_INVALID_JSON``; nesting is bounded.
"""

from __future__ import annotations

import re
from typing import Any

from praxo_actors._errors import ToolCallError
from praxo_actors.codes import TOOL_CALL_INVALID_JSON, TOOL_CALL_MALFORMED
from praxo_actors.core._call_values import _detached
from praxo_actors.core._formats._scan import Format, Section, Text, call, skip_spaces
from praxo_actors.core._json import try_parse_json

__all__ = ["FORMATS"]

_ESCAPE = "<escape>"
_END = "<end_function_call>"
_HEAD = re.compile(r"\s*call:([^{\s]*)\s*(?=\{)")
_KEY = re.compile(r"\s*([^:{}\[\],<>\s]+)\s*:")
_BARE = re.compile(r"[^,}\]<]*")
#: Deepest nesting of objects and lists read (each level is two Python frames).
MAX_NESTING = 128


class _Body:
    __slots__ = ("pos", "text")

    def __init__(self, text: str, pos: int) -> None:
        self.text, self.pos = text, pos

    def fail(self, what: str) -> ToolCallError:
        return ToolCallError(TOOL_CALL_INVALID_JSON, f"{what} at offset {self.pos}")

    def peek(self) -> str:
        self.pos = skip_spaces(self.text, self.pos)
        return self.text[self.pos : self.pos + 1]

    def obj(self, depth: int) -> dict[str, Any]:
        self.pos += 1  # "{"
        result: dict[str, Any] = {}
        if self.peek() == "}":
            self.pos += 1
            return result
        while True:
            key = _KEY.match(self.text, self.pos)
            if key is None:
                raise self.fail("expected key:")
            self.pos = key.end()
            result[key.group(1)] = self.value(depth)
            char = self.peek()
            self.pos += 1
            if char == "}":
                return result
            if char != ",":
                raise self.fail("expected , or }")

    def array(self, depth: int) -> list[Any]:
        self.pos += 1  # "["
        result: list[Any] = []
        if self.peek() == "]":
            self.pos += 1
            return result
        while True:
            result.append(self.value(depth))
            char = self.peek()
            self.pos += 1
            if char == "]":
                return result
            if char != ",":
                raise self.fail("expected , or ]")

    def value(self, depth: int) -> Any:
        if depth >= MAX_NESTING:
            raise self.fail(f"nesting deeper than {MAX_NESTING}")
        char = self.peek()
        if char == "{":
            return self.obj(depth + 1)
        if char == "[":
            return self.array(depth + 1)
        if self.text.startswith(_ESCAPE, self.pos):
            end = self.text.find(_ESCAPE, self.pos + len(_ESCAPE))
            if end < 0:
                raise self.fail("unclosed <escape>")
            value = self.text[self.pos + len(_ESCAPE) : end]
            self.pos = end + len(_ESCAPE)
            return value
        bare = _BARE.match(self.text, self.pos).group()  # type: ignore[union-attr]
        self.pos += len(bare)
        token = bare.strip()
        if not token:
            raise self.fail("expected a value")
        found, value = try_parse_json(token)
        return value if found and not isinstance(value, str) else token


def _read(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
    text, start = source.text, match.start()
    head = _HEAD.match(text, match.end())
    if head is None:
        failure = ToolCallError(TOOL_CALL_MALFORMED, "expected call:NAME{")
        return Section(start, len(text), failure), len(text)
    body = _Body(text, head.end())
    try:
        arguments = body.obj(1)
    except ToolCallError as exc:
        return Section(start, len(text), _detached(exc)), len(text)
    end = skip_spaces(text, body.pos)
    if text.startswith(_END, end):
        end += len(_END)
    elif end < len(text):
        return Section(start, end, ToolCallError(TOOL_CALL_MALFORMED, f"no {_END}")), end
    try:
        return Section(start, end, [call(head.group(1), arguments)]), end
    except ToolCallError as exc:
        return Section(start, end, _detached(exc)), end


FORMATS = (Format.build("functiongemma", r"<start_function_call>", _read),)
