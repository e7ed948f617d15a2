"""Formats whose calls sit in special-token sections: DeepSeek, Kimi K2 and Mistral.

- ``deepseek_v3`` (V3, R1): ``<｜tool▁calls▁begin｜>`` then per call ``<｜tool▁call▁begin｜>function
  <｜tool▁sep｜>NAME`` and the arguments in a ```` ```json ```` fence, ``<｜tool▁call▁end｜>``;
  ``<｜tool▁calls▁end｜>`` closes the section.
- ``deepseek_v31`` (V3.1): the same section, each call ``NAME<｜tool▁sep｜>{…}``.
- ``kimi_k2``: ``<|tool_calls_section_begin|>``, per call ``<|tool_call_begin|>functions.NAME:IDX
  <|tool_call_argument_begin|>{…}<|tool_call_end|>``, then ``<|tool_calls_section_end|>``; the
  call id is ``functions.NAME:IDX`` as written (Kimi's template needs it back).
- ``mistral``: ``[TOOL_CALLS]`` then a JSON array of calls (tokenizers before v11), or
  ``NAME{…}`` / ``NAME[ARGS]{…}`` / ``NAME[CALL_ID]ID[ARGS]{…}`` (v11 and later), one marker
  per call. There is no closing token: a call ends with its JSON.

Arguments end at the first end token outside JSON strings. A section missing an end token is
``TOOL_CALL_MALFORMED``: a truncated section is never returned in part.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from praxo_actors._errors import ToolCallError
from praxo_actors.codes import TOOL_CALL_MALFORMED
from praxo_actors.core._call_values import _detached
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
    read_json_value,
    skip_spaces,
)
from praxo_actors.models import ToolCall

__all__ = ["FORMATS"]

CallReader = Callable[[str], ToolCall]


def _section(
    begin: str, call_begin: str, call_end: str, end: str, read_call: CallReader
) -> Callable[[Text, re.Match[str]], tuple[Section | None, int]]:
    """Return a reader for ``begin (call_begin … call_end)* end``."""
    closer = closer_pattern(call_end)

    def read(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
        text, start = source.text, match.start()
        pos, calls = match.end(), []
        failure: ToolCallError | None = None
        while True:
            pos = skip_spaces(text, pos)
            if text.startswith(end, pos):
                pos += len(end)
                break
            if not text.startswith(call_begin, pos):
                return error(start, len(text), TOOL_CALL_MALFORMED, f"expected {call_begin}")
            found = find_outside_strings(text, pos + len(call_begin), closer)
            if found is None:
                return error(start, len(text), TOOL_CALL_MALFORMED, f"no {call_end}")
            if failure is None:
                try:
                    calls.append(read_call(text[pos + len(call_begin) : found.start()]))
                except ToolCallError as exc:
                    failure = _detached(exc)
            pos = found.end()
        return Section(start, pos, failure if failure is not None else calls), pos

    return read


_SEP = "<｜tool▁sep｜>"


def _deepseek_v3_call(inner: str) -> ToolCall:
    kind, sep, rest = inner.partition(_SEP)
    if not sep or kind.strip() != "function":
        raise ToolCallError(TOOL_CALL_MALFORMED, f"expected function{_SEP}NAME")
    name, _, arguments = rest.partition("\n")
    return call(name.strip(), arguments_body(arguments))


def _deepseek_v31_call(inner: str) -> ToolCall:
    name, sep, arguments = inner.partition(_SEP)
    if not sep:
        raise ToolCallError(TOOL_CALL_MALFORMED, f"expected NAME{_SEP}")
    return call(name.strip(), arguments_body(arguments))


def _kimi_call(inner: str) -> ToolCall:
    head, sep, arguments = inner.partition("<|tool_call_argument_begin|>")
    if not sep:
        raise ToolCallError(TOOL_CALL_MALFORMED, "expected <|tool_call_argument_begin|>")
    identifier = head.strip()
    name, colon, index = identifier.rpartition(":")
    if not colon or not index.isdigit():
        name = identifier
    name = name.removeprefix("functions.")
    return call(name, arguments_body(arguments), identifier)


_DEEPSEEK = (
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
)
_KIMI = (
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
)

# Mistral v11+: the name, then an optional [CALL_ID]id, then an optional [ARGS].
_MISTRAL_HEAD = re.compile(
    r"([^\s\[\]{}]+)[ \t]*(?:\[CALL_ID\][ \t]*([A-Za-z0-9_-]+)[ \t]*)?(?:\[ARGS\])?"
)


def _read_mistral(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
    text, start = source.text, match.start()
    pos = skip_spaces(text, match.end())
    if text.startswith(("[", "{"), pos):
        try:
            value, end = read_json_value(source, pos)
        except ToolCallError as exc:
            return Section(start, len(text), exc), len(text)
        return attempt(start, end, lambda: calls_in_value(value)), end
    head = _MISTRAL_HEAD.match(text, pos)
    if head is None:
        return error(start, len(text), TOOL_CALL_MALFORMED, "expected a name after [TOOL_CALLS]")
    name, identifier = head.group(1), head.group(2)
    try:
        arguments, end = read_json_value(source, head.end())
    except ToolCallError as exc:
        return Section(start, len(text), exc), len(text)
    return attempt(start, end, lambda: [call(name, arguments, identifier)]), end


FORMATS = (
    Format.build("deepseek_v3", re.escape(_DEEPSEEK[0]), _section(*_DEEPSEEK, _deepseek_v3_call)),
    Format.build("deepseek_v31", re.escape(_DEEPSEEK[0]), _section(*_DEEPSEEK, _deepseek_v31_call)),
    Format.build("kimi_k2", re.escape(_KIMI[0]), _section(*_KIMI, _kimi_call)),
    Format.build("mistral", re.escape("[TOOL_CALLS]"), _read_mistral),
)
