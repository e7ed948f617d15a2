"""Find tool calls in model output: canonical JSON, XML-style and dotted tags, dotted lines.

The formats, the name rule and the error codes are those of the Praxo Core. Choices it leaves
open, fixed here:

- Text that is one JSON document (after any leading ``<think>`` blocks) is read only as
  canonical JSON: markup inside its strings is data. An object is a call when it has ``name``
  and ``arguments`` (or ``parameters``; ``arguments`` wins when both are present); other keys
  are ignored. An array is a list of calls when it is non-empty and every element is such an
  object; any other JSON document is an answer and holds no calls.
- In ``<tool_call>{...}</tool_call>`` (no ``name`` attribute) the body must be an object with
  a ``name``; missing ``arguments`` mean ``{}``, as an empty body does.
- Arguments given as a JSON string are decoded; an empty string means ``{}``.
- ``id`` comes from an ``id="…"`` attribute or an ``"id"`` key and must be a string.
- Tags take ``name``/``id`` attributes in single or double quotes and may self-close
  (``<tool.ping/>``); other attributes are ignored, a repeated one is malformed.
- Each call is checked in a fixed order: tag syntax and closing tag (``TOOL_CALL_MALFORMED``),
  the name a tag or line gives (``TOOL_CALL_INVALID_NAME``), the body
  (``TOOL_CALL_INVALID_JSON``), the name inside a Hermes body, the arguments
  (``TOOL_CALL_INVALID_ARGUMENTS``).
- A dotted line is a call when the rest of the line is empty or starts with ``{``; then it must
  be one JSON object on that line. A line like ``tool.py is broken`` or ``tool.run()`` is prose.
- ``format=`` names one model family's markup instead (``praxo_actors.core._formats``);
  ``format=None`` is the default set described here.
- ``<think>`` without ``</think>`` runs to the end of the text. A ``</think>`` before any
  ``<think>`` and outside the markup of valid calls (templates that open the block in the
  prompt) ends reasoning begun at the start of the text.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from praxo_actors._errors import ToolCallError
from praxo_actors.codes import (
    TOOL_CALL_INVALID_JSON,
    TOOL_CALL_INVALID_NAME,
    TOOL_CALL_MALFORMED,
    TOOL_CALL_NOT_FOUND,
)
from praxo_actors.core._call_values import (
    _NAME,
    _THINK_CLOSE,
    _THINK_OPEN,
    MAX_NAME_LENGTH,
    _arguments,
    _call_from_object,
    _canonical,
    _checked_name,
    _detached,
)
from praxo_actors.core._formats._names import checked_format
from praxo_actors.core._json import _fence_body, try_parse_json
from praxo_actors.models import ToolCall

__all__ = ["MAX_NAME_LENGTH", "parse_tool_call", "parse_tool_calls", "strip_tool_calls"]


# Where a call may begin: a think block, an XML-style tag, a dotted tag, a dotted line.
_EVENT = re.compile(r"</?think>|<tool_call(?![^\s/>])|<tool\.|^[^\S\n]*tool\.", re.MULTILINE)
_LINE_CALL = re.compile(r"[^\S\n]*tool\.")
# Attributes stop at "<" and newlines so that a broken tag cannot reach into the next one.
_ATTRIBUTE = re.compile(r"""\s+([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"<\n]*)"|'([^'<\n]*)')""")
_TAG_END = re.compile(r"\s*(/?)>")
_DOTTED_NAME = re.compile(r"[^\s/<>]*")
# Inside a body: a JSON string, or the start of a closing tag.
_BODY_EVENT = re.compile(r'"|</tool(?=_call|\.)')
_STRING_TAIL = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_CLOSE_TAG = re.compile(r"</tool(?:_call|\.([^\s<>]*))\s*>")
_LINE_SPLIT = re.compile(r"([^\s{]*)\s*(.*)", re.DOTALL)


class _Found(NamedTuple):
    """A call, or the error its markup raises, and the span of that markup."""

    start: int
    end: int
    outcome: ToolCall | ToolCallError


def parse_tool_calls(text: str, *, format: str | None = None) -> list[ToolCall]:
    """Return every tool call in ``text``, in order of appearance.

    Args:
        text: Model output.
        format: None for the default set below; a name from
            :func:`~praxo_actors.core.tool_call_formats` to read one model family's markup;
            ``"auto"`` for every format with an unambiguous marker, and the default set.

    Raises:
        ToolCallError: The first error in text order: ``TOOL_CALL_INVALID_JSON``,
            ``TOOL_CALL_INVALID_ARGUMENTS``, ``TOOL_CALL_INVALID_NAME`` or
            ``TOOL_CALL_MALFORMED`` (also for a ``text`` that is not a ``str``);
            ``TOOL_CALL_UNKNOWN_FORMAT`` for an unknown ``format``.
    """
    if format is not None:
        checked_format(format)
    if not isinstance(text, str):
        raise ToolCallError(TOOL_CALL_MALFORMED, f"expected str, got {type(text).__name__}")
    if format is not None:
        from praxo_actors.core._formats._registry import parse_named  # first use loads them

        named = parse_named(text, format)
        if named is not None:
            return named
    canonical = _canonical(text)
    if canonical is not None:
        return canonical[2]
    calls = []
    for found in _scan(text, until_error=True):
        if isinstance(found.outcome, ToolCallError):
            raise found.outcome
        calls.append(found.outcome)
    return calls


def parse_tool_call(text: str, *, format: str | None = None) -> ToolCall:
    """Return the first tool call in ``text`` (``format`` as in :func:`parse_tool_calls`).

    Raises:
        ToolCallError: ``TOOL_CALL_NOT_FOUND`` when there is none, or the first parse error.
    """
    calls = parse_tool_calls(text, format=format)
    if not calls:
        raise ToolCallError(TOOL_CALL_NOT_FOUND, "no tool call in the text")
    return calls[0]


def strip_tool_calls(text: str, *, format: str | None = None) -> str:
    """Remove the markup of every recognised call and trim the result.

    Malformed markup is left in place; this never raises for a ``str`` and a known
    ``format`` (as in :func:`parse_tool_calls`). Stripping is for presentation: it neither
    sanitises nor authorises anything.

    Raises:
        TypeError: ``text`` is not a ``str``.
        ToolCallError: ``TOOL_CALL_UNKNOWN_FORMAT`` for an unknown ``format``.
    """
    if format is not None:
        checked_format(format)
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    if format is not None:
        from praxo_actors.core._formats._registry import strip_named

        named = strip_named(text, format)
        if named is not None:
            return named
    try:
        canonical = _canonical(text)
    except ToolCallError:
        return text.strip()
    if canonical is not None:
        start, end, calls = canonical
        return (text[:start] + text[end:]).strip() if calls else text.strip()
    parts, pos = [], 0
    for found in _scan(text):
        if isinstance(found.outcome, ToolCall):
            parts.append(text[pos : found.start])
            pos = found.end
    parts.append(text[pos:])
    return "".join(parts).strip()


# Canonical JSON ------------------------------------------------------------------------------


# Markup --------------------------------------------------------------------------------------


def _scan(text: str, *, until_error: bool = False) -> list[_Found]:
    """Return every call or error in the markup of ``text``, in order.

    With ``until_error`` the scan ends at the first error (the last item returned).
    """
    found: list[_Found] = []
    pos, at_line_start = 0, True
    # A </think> outside the markup of valid calls and before any <think> ends reasoning that
    # began at the start of the text (chat templates often open the block in the prompt).
    orphan_possible = _THINK_CLOSE in text
    while pos < len(text):
        if at_line_start and (line := _LINE_CALL.match(text, pos)) is not None:
            match: re.Match[str] | None = line
        else:
            match = _EVENT.search(text, pos)
        at_line_start = False
        if match is None:
            break
        token = match.group()
        item: _Found | None
        if token == _THINK_CLOSE:
            if orphan_possible:
                found.clear()
                orphan_possible, at_line_start = False, True
            pos = match.end()
            continue
        if token == _THINK_OPEN:
            orphan_possible = False
            close = text.find(_THINK_CLOSE, match.end())
            if close < 0:
                break
            pos, at_line_start = close + len(_THINK_CLOSE), True
            continue
        if token.startswith("<tool_call"):
            item, pos = _tag_call(text, match.start(), match.end(), dotted=False)
        elif token == "<tool.":
            item, pos = _tag_call(text, match.start(), match.end(), dotted=True)
        else:
            item, pos = _line_call(text, match.start(), match.end())
        if item is None:
            continue
        failed = isinstance(item.outcome, ToolCallError)
        if orphan_possible and failed:
            close = text.find(_THINK_CLOSE, item.start, item.end)
            if close >= 0:  # broken markup is not markup: its </think> is the orphan
                found.clear()
                orphan_possible, at_line_start = False, True
                pos = close + len(_THINK_CLOSE)
                continue
        found.append(item)
        if until_error and failed and not orphan_possible:
            break
    return found


def _tag_call(text: str, start: int, pos: int, *, dotted: bool) -> tuple[_Found, int]:
    """Read the tag opened at ``start``; ``pos`` is just past ``<tool_call`` or ``<tool.``."""
    name: str | None = None
    if dotted:
        name = _DOTTED_NAME.match(text, pos).group()  # type: ignore[union-attr]
        pos += len(name)
    attributes: dict[str, str] = {}
    while (attribute := _ATTRIBUTE.match(text, pos)) is not None:
        key = attribute.group(1)
        if key in attributes:
            return _error(start, attribute.end(), TOOL_CALL_MALFORMED, f"repeated {key}=")
        attributes[key] = attribute.group(2) if attribute.group(2) is not None else attribute[3]
        pos = attribute.end()
    tag_end = _TAG_END.match(text, pos)
    if tag_end is None:
        return _error(start, pos, TOOL_CALL_MALFORMED, "unterminated opening tag")
    body_start = end = tag_end.end()
    if tag_end.group(1):
        body = ""
    else:
        close = _find_close(text, body_start)
        if close is None:
            # An unclosed tag swallows the rest of the text: scanning ends here.
            return _error(start, len(text), TOOL_CALL_MALFORMED, "unclosed tag")
        end = close.end()
        if close.group(1) != name:
            return _error(start, end, TOOL_CALL_MALFORMED, f"mismatched {close.group()}")
        body = text[body_start : close.start()]
    identifier = attributes.get("id")
    if name is None:
        name = attributes.get("name")
    try:
        if name is None:  # the Hermes form: the body is the whole call
            call = _call_from_object(_body_value(body, hermes=True), id_=identifier)
        else:
            name = _checked_name(name)
            arguments = _arguments(_body_value(body, hermes=False))
            call = ToolCall(name=name, arguments=arguments, id=identifier)
    except ToolCallError as exc:
        return _Found(start, end, _detached(exc)), end
    return _Found(start, end, call), end


def _find_close(text: str, pos: int) -> re.Match[str] | None:
    """Return the first closing tag at or after ``pos`` that is not inside a JSON string."""
    while (event := _BODY_EVENT.search(text, pos)) is not None:
        if event.group() == '"':
            tail = _STRING_TAIL.match(text, event.end())
            if tail is None:
                return None
            pos = tail.end()
            continue
        close = _CLOSE_TAG.match(text, event.start())
        if close is not None:
            return close
        pos = event.end()
    return None


def _line_call(text: str, start: int, pos: int) -> tuple[_Found | None, int]:
    """Read a dotted line starting at ``start``; ``pos`` is just past ``tool.``."""
    newline = text.find("\n", pos)
    line_end = len(text) if newline < 0 else newline
    end = line_end if newline < 0 else newline + 1
    # The name runs to the first "{" or space; the arguments are the rest of the line.
    name, arguments = _LINE_SPLIT.match(text[pos:line_end].strip()).groups()  # type: ignore[union-attr]
    if arguments and arguments[0] != "{":
        return None, end  # prose such as "tool.py is broken"
    if not arguments and _NAME.fullmatch(name) is None:
        return None, end  # prose such as "tool.run()"
    if len(name) > MAX_NAME_LENGTH or _NAME.fullmatch(name) is None:
        try:
            _checked_name(name)
        except ToolCallError as exc:
            return _Found(start, end, _detached(exc)), end
    if arguments:
        found, value = try_parse_json(arguments)
        if not found:  # the common failure in hostile text: no exception raised for it
            return _Found(start, end, ToolCallError(TOOL_CALL_INVALID_JSON, value)), end
    else:
        value = {}
    try:
        call = ToolCall(name=name, arguments=_arguments(value))
    except ToolCallError as exc:
        return _Found(start, end, _detached(exc)), end
    return _Found(start, end, call), end


# Values --------------------------------------------------------------------------------------


def _error(start: int, end: int, code: str, message: str) -> tuple[_Found, int]:
    return _Found(start, end, ToolCallError(code, message)), end


def _body_value(body: str, *, hermes: bool) -> Any:
    """Return the JSON value of a tag's body; an empty body is ``{}`` (or no name)."""
    body = body.strip()
    if not body:
        if hermes:
            raise ToolCallError(TOOL_CALL_INVALID_NAME, "the call has no name")
        return {}
    if body.startswith("```"):
        body = _fence_body(body) or body
    value = _parse_body(body)
    if hermes and not isinstance(value, dict):
        raise ToolCallError(TOOL_CALL_MALFORMED, "expected a JSON object naming the call")
    return value


def _parse_body(body: str) -> Any:
    found, value = try_parse_json(body)
    if not found:
        raise ToolCallError(TOOL_CALL_INVALID_JSON, value)
    return value
