"""Strict JSON parsing and canonical encoding, and JSON extraction from model output.

Choices the RFC leaves open, fixed here so every port agrees:

- Duplicate object keys are accepted; the last one wins (as in msgspec and the stdlib).
- A leading byte-order mark is rejected (RFC 8259 §8.1 lets a parser ignore it; we do not).
- Lone surrogates, escaped (``"\\ud800"``) or raw in the ``str``, are rejected on input and output.
- Numbers must be representable: a float overflowing to infinity (``1e400``) and an integer
  longer than 4,300 characters (CPython's conversion limit, a guard against quadratic
  conversions) are rejected; a float underflowing (``1e-400``) becomes ``0.0``.
- Containers nest at most :data:`MAX_DEPTH` levels, on input and output.
"""

from __future__ import annotations

import math
import re
from typing import Any

import msgspec

from praxo_actors._errors import JSONError

__all__ = ["MAX_DEPTH", "encode_json", "extract_json", "parse_json"]

#: Deepest container nesting accepted. msgspec recurses on the C stack and fails near 1,000
#: levels minus the caller's own frames; 512 leaves room for a deep caller and is far beyond
#: anything a model or a tool produces.
MAX_DEPTH = 512

# msgspec parses integers of at most 4,300 characters (sign included); encode_json refuses any
# integer parse_json could not read back.
_INT_UPPER = 10**4300
_INT_LOWER = -(10**4299)

_DECODER = msgspec.json.Decoder()


def _plain(obj: Any) -> Any:
    """Turn a subclass of ``str``, ``int`` or ``float`` into its base type for msgspec."""
    for base in (str, int, float):
        if isinstance(obj, base):
            return base(obj)
    raise TypeError(f"{type(obj).__name__} is not a JSON value")


_ENCODER = msgspec.json.Encoder(order="sorted", enc_hook=_plain)

# The body of a JSON string after its opening quote, up to (not including) the closing quote;
# unrolled so that it never backtracks. It stops early at a raw control character.
_STRING_BODY = re.compile(r'[^"\\\x00-\x1f]*(?:\\[^\x00-\x1f][^"\\\x00-\x1f]*)*')

# While scanning a candidate for extract_json: the next character that matters.
_STRUCTURAL = re.compile(r'[\[\]{}"]')
_OPENER = re.compile(r"[\[{]")
# A fence opens with ``` and an info string free of backticks, then a newline (so inline code
# and backticks inside JSON strings never open one); it closes on a line of its own.
_FENCE_OPEN = re.compile(r"```([^`\n]*)\n")
_FENCE_CLOSE = re.compile(r"^[ \t]*```[ \t]*$", re.MULTILINE)


def parse_json(text: str) -> Any:
    """Parse one JSON text strictly (RFC 8259).

    Args:
        text: The JSON text; whitespace may surround the value.

    Returns:
        The value: ``None``, ``bool``, ``int``, ``float``, ``str``, ``list`` or ``dict``.

    Raises:
        JSONError: ``JSON_INVALID`` for anything that is not exactly one JSON value, for
            non-finite or unrepresentable numbers, for nesting deeper than :data:`MAX_DEPTH`,
            and for an input that is not a ``str``.
    """
    if not isinstance(text, str):
        raise JSONError("JSON_INVALID", f"expected str, got {type(text).__name__}")
    try:
        value = _DECODER.decode(text)
    except msgspec.DecodeError as exc:
        raise JSONError("JSON_INVALID", str(exc)) from None
    except UnicodeEncodeError:
        raise JSONError("JSON_INVALID", "text contains a lone surrogate") from None
    except RecursionError:
        raise JSONError("JSON_INVALID", f"nesting deeper than {MAX_DEPTH}") from None
    if text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        raise JSONError("JSON_INVALID", f"nesting deeper than {MAX_DEPTH}")
    return value


def encode_json(value: Any) -> str:
    """Encode a JSON value as compact canonical JSON.

    Keys are sorted by code point, there is no insignificant whitespace, and non-ASCII text is
    written as UTF-8 rather than escaped. Tuples encode as arrays.

    Raises:
        JSONError: ``JSON_INVALID`` for NaN or infinity, a non-``str`` key, a value that is not
            JSON (a set, bytes, an arbitrary object), a lone surrogate, an integer
            :func:`parse_json` could not read back, a cycle, or nesting deeper than
            :data:`MAX_DEPTH`.
    """
    _check_value(value)
    try:
        return _ENCODER.encode(value).decode("utf-8")
    except (TypeError, ValueError, msgspec.EncodeError, RecursionError) as exc:
        # ValueError covers UnicodeEncodeError (a lone surrogate).
        raise JSONError("JSON_INVALID", str(exc)) from None


def extract_json(text: str) -> Any:
    """Find a JSON value in model output.

    Tries, in order: the whole text; the first fenced block (```` ```json ```` or a bare
    ```` ``` ````) whose body parses; the first balanced ``{…}`` or ``[…]`` that parses, the
    bracket scan skipping brackets inside JSON strings. The work is bounded by a small
    multiple of the text's length, so hostile input cannot make it quadratic.

    Raises:
        JSONError: ``JSON_NOT_FOUND`` when nothing parses; ``JSON_INVALID`` for a non-``str``.
    """
    if not isinstance(text, str):
        raise JSONError("JSON_INVALID", f"expected str, got {type(text).__name__}")
    found, value = _try_parse(text)
    if found:
        return value
    for body in _fenced_bodies(text):
        found, value = _try_parse(body)
        if found:
            return value
    found, value = _first_balanced(text)
    if found:
        return value
    raise JSONError("JSON_NOT_FOUND", "no JSON value in the text")


def _try_parse(text: str) -> tuple[bool, Any]:
    try:
        return True, parse_json(text)
    except JSONError:
        return False, None


def _deeper_than(value: Any, limit: int) -> bool:
    """Return whether a decoded value nests containers more than ``limit`` deep.

    Walks the containers of the decoded value (a third of the time of scanning the text for
    brackets outside strings, on a 770 KB document).
    """
    if type(value) is not dict and type(value) is not list:
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        if depth > limit:
            return True
        for child in item.values() if type(item) is dict else item:
            kind = type(child)
            if kind is dict or kind is list:
                push((child, depth + 1))
    return False


def _check_value(value: Any) -> None:
    """Raise ``JSON_INVALID`` unless ``value`` is a finite, acyclic JSON value."""
    # Iterative, so that a deep value fails with a code rather than a RecursionError.
    on_path: set[int] = set()
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth < 0:  # leaving the container whose id() is ``item``
            on_path.discard(item)
        elif item is None or isinstance(item, str | bool):
            pass
        elif isinstance(item, int):
            if not _INT_LOWER < item < _INT_UPPER:
                raise JSONError("JSON_INVALID", "integer too long to read back")
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise JSONError("JSON_INVALID", f"{item!r} is not a JSON number")
        elif isinstance(item, dict | list | tuple):
            if depth >= MAX_DEPTH:
                raise JSONError("JSON_INVALID", f"nesting deeper than {MAX_DEPTH}")
            if id(item) in on_path:
                raise JSONError("JSON_INVALID", "value contains a cycle")
            on_path.add(id(item))
            stack.append((id(item), -1))
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str):
                        raise JSONError("JSON_INVALID", f"object key {key!r} is not a str")
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        else:
            raise JSONError("JSON_INVALID", f"{type(item).__name__} is not a JSON value")


def _fenced_bodies(text: str) -> list[str]:
    """Return the bodies of the ```json and bare ``` fenced blocks, in order."""
    bodies = []
    pos = 0
    while (opening := _FENCE_OPEN.search(text, pos)) is not None:
        closing = _FENCE_CLOSE.search(text, opening.end())
        if closing is None:
            break
        if _is_json_info(opening.group(1)):
            bodies.append(text[opening.end() : closing.start()])
        pos = closing.end()
    return bodies


def _fence_body(block: str) -> str | None:
    """Return the body of a text that is one ```json or bare ``` block, else None."""
    opening = _FENCE_OPEN.match(block)
    if opening is None or not _is_json_info(opening.group(1)) or not block.endswith("```"):
        return None
    body = block[opening.end() : -3]
    head = body.rstrip(" \t")  # the closing fence must stand on its own line
    return body if not head or head.endswith("\n") else None


def _is_json_info(info: str) -> bool:
    return info.strip().lower() in ("", "json")


def _first_balanced(text: str) -> tuple[bool, Any]:
    """Return the first balanced ``{…}``/``[…]`` span of ``text`` that parses."""
    # spans[start] is (end, depth) for a balanced span, None for an opener that never closes
    # (or is closed by the wrong bracket, or holds a raw control character in a string).
    # A scan from an opener also settles every opener it meets outside strings, so later
    # openers are looked up rather than rescanned; only openers that sat inside a string
    # need a scan of their own. Scans and parse attempts share a budget of a few dozen passes
    # over the text, so that hostile text stays linear.
    spans: dict[int, tuple[int, int] | None] = {}
    budget = 16 * len(text) + 65536
    for match in _OPENER.finditer(text):
        if budget <= 0:
            break
        start = match.start()
        if start not in spans:
            budget -= _scan_from(text, start, spans)
        span = spans[start]
        if span is not None and span[1] <= MAX_DEPTH:
            end = span[0]
            budget -= end - start
            found, value = _try_parse(text[start:end])
            if found:
                return True, value
    return False, None


def _scan_from(text: str, start: int, spans: dict[int, tuple[int, int] | None]) -> int:
    """Match brackets from the opener at ``start``; record spans; return characters read."""
    # Each open entry is [position, deepest nesting closed inside it].
    stack: list[list[int]] = []
    pos = start
    while True:
        match = _STRUCTURAL.search(text, pos)
        if match is None:
            break
        char, pos = match.group(), match.end()
        if char == '"':
            pos = _STRING_BODY.match(text, pos).end()  # type: ignore[union-attr]
            if pos == len(text) or text[pos] != '"':
                break  # unterminated, or a raw control character: not JSON
            pos += 1
        elif char in "[{":
            stack.append([match.start(), 0])
        else:
            opener, inner = stack[-1]
            if text[opener] + char not in ("[]", "{}"):
                break
            stack.pop()
            spans[opener] = (pos, inner + 1)
            if not stack:
                return pos - start
            stack[-1][1] = max(stack[-1][1], inner + 1)
    for opener, _ in stack:
        spans[opener] = None
    return pos - start
