"""The scan every named format shares: markers found outside reasoning, read into sections.

A format is a marker pattern and a reader. The driver finds the next marker or reasoning token;
reasoning (``<think>…</think>`` and its relatives) is skipped, a marker is handed to the reader,
which returns a :class:`Section` (every call its markup holds, or the error it raises) or None
for text that only looked like a marker. Choices, as in the default parser:

- A reasoning block without its closing token runs to the end of the text.
- A closing reasoning token before any opening one ends reasoning begun at the start of the text
  (templates often open the block in the prompt): what was found before it is dropped.
- A section is all or nothing: one broken call makes the whole section an error, so a list is
  never returned partly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from praxo_actors._errors import ToolCallError
from praxo_actors.codes import TOOL_CALL_INVALID_JSON, TOOL_CALL_INVALID_NAME, TOOL_CALL_MALFORMED
from praxo_actors.core._call_values import _arguments, _call_from_object, _checked_name, _detached
from praxo_actors.core._json import _fence_body, try_parse_json
from praxo_actors.models import ToolCall

__all__ = [
    "REASONING",
    "Format",
    "ObjectReader",
    "Reader",
    "Section",
    "Spans",
    "Text",
    "arguments_body",
    "attempt",
    "call",
    "calls_in_value",
    "closer_pattern",
    "error",
    "find_outside_strings",
    "json_calls",
    "parse_json_body",
    "read_json_value",
    "scan",
    "skip_spaces",
    "standard_object",
]

#: Reasoning blocks of the families supported: open and close tokens.
REASONING = {
    "<think>": "</think>",
    "<seed:think>": "</seed:think>",
    "[THINK]": "[/THINK]",
    "<|START_THINKING|>": "<|END_THINKING|>",
    "<|inner_prefix|>": "<|inner_suffix|>",
}
_CLOSES = frozenset(REASONING.values())
_REASONING_PATTERN = "|".join(re.escape(token) for token in (*REASONING, *_CLOSES))

# JSON strings allow escapes; Python strings (for pythonic calls) use either quote and stop at a
# newline. Each tail starts just past the opening quote.
_JSON_STRING_TAIL = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_PY_STRING_TAILS = {
    '"': re.compile(r'[^"\\\n]*(?:\\.[^"\\\n]*)*"', re.DOTALL),
    "'": re.compile(r"[^'\\\n]*(?:\\.[^'\\\n]*)*'", re.DOTALL),
}
_JSON_EVENT = re.compile(r'["\[\]{}]')
_PY_EVENT = re.compile(r"[\"'\[\](){}]")
_OPENERS = frozenset("[({")
_SPACES = re.compile(r"\s*")


class Section(NamedTuple):
    """The span of one piece of call markup and every call it holds, or its error."""

    start: int
    end: int
    outcome: list[ToolCall] | ToolCallError


Reader = Callable[["Text", "re.Match[str]"], tuple[Section | None, int]]


@dataclass(frozen=True, slots=True)
class Format:
    """A named format: where its markup may begin, and how to read it from there."""

    name: str
    markers: str
    read: Reader
    events: re.Pattern[str]

    @classmethod
    def build(cls, name: str, markers: str, read: Reader) -> Format:
        """Compile the format's event pattern: reasoning tokens first, then its markers."""
        return cls(name, markers, read, re.compile(f"{_REASONING_PATTERN}|{markers}", re.M))


class Spans:
    """Find where a bracketed value ends, skipping strings, in amortised linear time.

    One scan from an opener records the closer of every opener it passes, so the many openers
    of hostile text (``{{{{…``) are looked up, not rescanned. Scans that start inside what an
    earlier scan took for a string cost again; a budget of a few passes over the text bounds
    them, past which :class:`ToolCallError` ``TOOL_CALL_MALFORMED`` is raised.
    """

    __slots__ = ("_budget", "_memo", "_python", "text")

    def __init__(self, text: str, *, python: bool = False) -> None:
        self.text = text
        self._python = python
        self._memo: dict[int, int] = {}
        self._budget = 8 * len(text) + 65_536

    def end(self, start: int) -> int | None:
        """Return the index just past the closer of the opener at ``start``, or None."""
        known = self._memo.get(start)
        if known is not None:
            return known if known >= 0 else None
        text, memo = self.text, self._memo
        event_re = _PY_EVENT if self._python else _JSON_EVENT
        stack: list[int] = []
        pos = start
        while (event := event_re.search(text, pos)) is not None:
            char, at = event.group(), event.start()
            if char in _OPENERS:
                stack.append(at)
                pos = at + 1
            elif char in "\"'":
                tail = (_PY_STRING_TAILS[char] if self._python else _JSON_STRING_TAIL).match(
                    text, at + 1
                )
                if tail is None:
                    break
                pos = tail.end()
            else:
                memo[stack.pop()] = at + 1
                pos = at + 1
                if not stack:
                    self._charge(pos - start)
                    return pos
        self._charge(len(text) - start)
        for opener in stack:
            memo.setdefault(opener, -1)
        return None

    def _charge(self, cost: int) -> None:
        self._budget -= cost
        if self._budget < 0:
            raise ToolCallError(TOOL_CALL_MALFORMED, "too many unbalanced brackets to scan")


class Text:
    """The text being scanned, with its bracket scanners built on first use."""

    __slots__ = ("_json", "_next", "_python", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._json: Spans | None = None
        self._python: Spans | None = None
        self._next: dict[str, tuple[int, int]] = {}

    def find(self, literal: str, pos: int) -> int:
        """Return ``text.find(literal, pos)``, reusing the last answer while it still holds.

        Readers that look ahead for a token from every marker would rescan the same stretch of
        text once per marker; with the answer kept, each stretch is scanned once.
        """
        known = self._next.get(literal)
        if known is not None:
            since, found = known
            if since <= pos and (found < 0 or found >= pos):
                return found  # nothing in [since, found), so nothing in [pos, found)
        found = self.text.find(literal, pos)
        self._next[literal] = (pos, found)
        return found

    @property
    def json(self) -> Spans:
        if self._json is None:
            self._json = Spans(self.text)
        return self._json

    @property
    def python(self) -> Spans:
        if self._python is None:
            self._python = Spans(self.text, python=True)
        return self._python


def scan(fmt: Format, text: str, *, until_error: bool = False) -> list[Section]:
    """Return every section of ``fmt``'s markup in ``text``, in order.

    With ``until_error`` the scan ends at the first error (the last section returned).
    """
    found: list[Section] = []
    source = Text(text)
    pos = 0
    orphan_possible = any(close in text for close in _CLOSES)
    while (match := fmt.events.search(text, pos)) is not None:
        token = match.group()
        close = REASONING.get(token)
        if close is not None:
            orphan_possible = False
            end = text.find(close, match.end())
            if end < 0:
                break
            pos = end + len(close)
            continue
        if token in _CLOSES:
            if orphan_possible:
                found.clear()
                orphan_possible = False
            pos = match.end()
            continue
        try:
            section, pos = fmt.read(source, match)
        except ToolCallError as exc:
            section, pos = Section(match.start(), len(text), _detached(exc)), len(text)
        pos = max(pos, match.start() + 1)
        if section is None:
            continue
        failed = isinstance(section.outcome, ToolCallError)
        if orphan_possible and failed:
            inner = _first_close(text, section.start, section.end)
            if inner is not None:  # broken markup is not markup: its closing token is the orphan
                found.clear()
                orphan_possible = False
                pos = inner
                continue
        found.append(section)
        if until_error and failed and not orphan_possible:
            break
    return found


def _first_close(text: str, start: int, end: int) -> int | None:
    ends = [at + len(close) for close in _CLOSES if (at := text.find(close, start, end)) >= 0]
    return min(ends) if ends else None


# Building sections -----------------------------------------------------------------------------


def error(start: int, end: int, code: str, message: str) -> tuple[Section, int]:
    """Return an error section over ``[start, end)`` and the position to resume at."""
    return Section(start, end, ToolCallError(code, message)), end


def call(name: str, arguments: Any, id_: str | None = None) -> ToolCall:
    """Build a call from a name and arguments the text gave, checking both."""
    return ToolCall(name=_checked_name(name), arguments=_arguments(arguments), id=id_)


def skip_spaces(text: str, pos: int) -> int:
    """Return the first position at or after ``pos`` that is not whitespace."""
    return _SPACES.match(text, pos).end()  # type: ignore[union-attr]


def find_outside_strings(
    text: str, pos: int, closer: re.Pattern[str], *, python: bool = False
) -> re.Match[str] | None:
    """Return the first match of ``closer`` at or after ``pos`` outside JSON (or Python) strings.

    ``closer`` must match the closing marker and also a quote, which is skipped with its string.
    A string left open hides every later marker, so None is returned.
    """
    while (event := closer.search(text, pos)) is not None:
        char = event.group()
        if char == '"' or (python and char == "'"):
            tail = (_PY_STRING_TAILS[char] if python else _JSON_STRING_TAIL).match(
                text, event.end()
            )
            if tail is None:
                return None
            pos = tail.end()
            continue
        return event
    return None


def closer_pattern(*markers: str, python: bool = False) -> re.Pattern[str]:
    """Return a pattern for :func:`find_outside_strings`: the markers, or a quote."""
    quotes = "[\"']" if python else '"'
    return re.compile("|".join([*(re.escape(m) for m in markers), quotes]))


def parse_json_body(body: str) -> Any:
    """Return the JSON value of a body (fenced or not), or raise ``TOOL_CALL_INVALID_JSON``."""
    body = body.strip()
    if body.startswith("```"):
        body = _fence_body(body) or body
    found, value = try_parse_json(body)
    if not found:
        raise ToolCallError(TOOL_CALL_INVALID_JSON, value)
    return value


def arguments_body(body: str) -> dict[str, Any]:
    """Return the arguments a body holds: a JSON object, or ``{}`` when it is empty."""
    return {} if not body.strip() else _arguments(parse_json_body(body))


ObjectReader = Callable[[dict[str, Any]], ToolCall]


def standard_object(value: dict[str, Any]) -> ToolCall:
    """Read ``{"name": …, "arguments" | "parameters": …, "id"?: …}``."""
    return _call_from_object(value)


def json_calls(body: str, read_object: ObjectReader = standard_object) -> list[ToolCall]:
    """Return the calls in a body of one or more JSON values: call objects or arrays of them.

    Raises:
        ToolCallError: ``TOOL_CALL_INVALID_JSON`` for a body that does not parse,
            ``TOOL_CALL_MALFORMED`` for a value that is neither, ``TOOL_CALL_INVALID_NAME``
            for an empty body.
    """
    stripped = body.strip()
    if not stripped:
        raise ToolCallError(TOOL_CALL_INVALID_NAME, "the call has no name")
    if stripped.startswith("```"):
        stripped = _fence_body(stripped) or stripped
    found, value = try_parse_json(stripped)
    values = [value] if found else _json_values(stripped)
    calls: list[ToolCall] = []
    for item in values:
        calls.extend(calls_in_value(item, read_object))
    return calls


def calls_in_value(value: Any, read_object: ObjectReader = standard_object) -> list[ToolCall]:
    """Return the calls of one JSON value: a call object or an array of them."""
    if isinstance(value, dict):
        return [read_object(value)]
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        return [read_object(item) for item in value]
    raise ToolCallError(TOOL_CALL_MALFORMED, "expected a JSON object or array naming calls")


def _json_values(body: str) -> list[Any]:
    """Split a body of several whitespace-separated JSON containers and parse each."""
    spans = Spans(body)
    values, pos = [], skip_spaces(body, 0)
    while pos < len(body):
        if body[pos] not in "{[":
            raise ToolCallError(TOOL_CALL_INVALID_JSON, f"unexpected {body[pos]!r} in the body")
        end = spans.end(pos)
        if end is None:
            raise ToolCallError(TOOL_CALL_INVALID_JSON, "unbalanced brackets in the body")
        found, value = try_parse_json(body[pos:end])
        if not found:
            raise ToolCallError(TOOL_CALL_INVALID_JSON, value)
        values.append(value)
        pos = skip_spaces(body, end)
    return values


def read_json_value(source: Text, pos: int) -> tuple[Any, int]:
    """Read the JSON container that starts at ``pos`` (after spaces); return it and its end.

    Raises:
        ToolCallError: ``TOOL_CALL_MALFORMED`` when no container starts there,
            ``TOOL_CALL_INVALID_JSON`` when it is unbalanced or does not parse.
    """
    text = source.text
    pos = skip_spaces(text, pos)
    if pos >= len(text) or text[pos] not in "{[":
        raise ToolCallError(TOOL_CALL_MALFORMED, "expected a JSON object or array")
    end = source.json.end(pos)
    if end is None:
        raise ToolCallError(TOOL_CALL_INVALID_JSON, "unbalanced brackets")
    found, value = try_parse_json(text[pos:end])
    if not found:
        raise ToolCallError(TOOL_CALL_INVALID_JSON, value)
    return value, end


def attempt(start: int, end: int, read: Callable[[], list[ToolCall]]) -> Section:
    """Run ``read`` and return its calls, or its error, as a section over ``[start, end)``."""
    try:
        return Section(start, end, read())
    except ToolCallError as exc:
        return Section(start, end, _detached(exc))
