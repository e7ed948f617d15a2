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
from praxo_actors.codes import JSON_INVALID, JSON_NOT_FOUND

__all__ = ["MAX_DEPTH", "encode_json", "extract_json", "parse_json", "try_parse_json"]

#: Deepest container nesting accepted. msgspec recurses on the C stack and fails near 1,000
#: levels minus the caller's own frames; 512 leaves room for a deep caller and is far beyond
#: anything a model or a tool produces.
MAX_DEPTH = 512

#: Most values (containers and scalars, counted as written out) encode_json accepts: a value
#: that shares one container many times would otherwise write out exponentially many.
MAX_ITEMS = 10_000_000

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


# While scanning a candidate for extract_json: an opener, a closer, a JSON string (group 4: its
# closing quote, missing when it is unterminated or stops at a raw control character), or a run
# of characters that JSON never has outside strings (so no span around it can parse). Characters
# JSON may have there (whitespace, ":", ",", numbers, true, false, null) are skipped.
_TOKEN = re.compile(
    r'([\[{])|([\]}])|("[^"\\\x00-\x1f]*(?:\\[^\x00-\x1f][^"\\\x00-\x1f]*)*(")?)'
    r"|([^\[\]{}\" \t\n\r:,0-9.eE+\-truefalsn]+)"
)
_OPENER = re.compile(r"[\[{]")
# The least a parse attempt costs of extract_json's budget: many tiny failing candidates
# ("[-]" * 333_333) would otherwise cost a parse each.
_ATTEMPT_COST = 256
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
    found, value = try_parse_json(text)
    if not found:
        raise JSONError(JSON_INVALID, value) from None
    return value


def try_parse_json(text: Any) -> tuple[bool, Any]:
    """Return ``(True, value)`` as :func:`parse_json` would, or ``(False, why)`` for its error.

    For callers that try many candidates (the extractor, the tool-call scanner): a refusal costs
    no exception of ours.
    """
    if not isinstance(text, str):
        return False, f"expected str, got {type(text).__name__}"
    try:
        value = _DECODER.decode(text)
    except msgspec.DecodeError as exc:
        return False, str(exc)
    except UnicodeEncodeError:
        return False, "text contains a lone surrogate"
    except RecursionError:
        return False, f"nesting deeper than {MAX_DEPTH}"
    if text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        return False, f"nesting deeper than {MAX_DEPTH}"
    return True, value


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
        raise JSONError(JSON_INVALID, str(exc)) from None


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
        raise JSONError(JSON_INVALID, f"expected str, got {type(text).__name__}")
    found, value = try_parse_json(text)
    if found:
        return value
    for body in _fenced_bodies(text):
        found, value = try_parse_json(body)
        if found:
            return value
    found, value = _first_balanced(text)
    if found:
        return value
    raise JSONError(JSON_NOT_FOUND, "no JSON value in the text")


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
    """Raise ``JSON_INVALID`` unless ``value`` is a finite, acyclic JSON value of at most
    :data:`MAX_ITEMS` values written out."""
    # Iterative, so that a deep value fails with a code rather than a RecursionError. A
    # container met again (shared, not a cycle) is not walked again: its size and height are
    # kept from the first time, so a value sharing one container many times is refused in time
    # linear in its distinct containers, not after writing out gigabytes.
    on_path: set[int] = set()
    done: dict[int, tuple[int, int]] = {}  # id -> (values written out, levels below)
    frames: list[list[int]] = [[0, 0]]  # per open container: values so far, deepest child
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth < 0:  # leaving the container whose id() is ``item``
            on_path.discard(item)
            count, below = frames.pop()
            done[item] = (count, below)
            _add_child(frames[-1], count, below)
            continue
        if item is None or isinstance(item, str | bool):
            frames[-1][0] += 1
        elif isinstance(item, int):
            if not _INT_LOWER < item < _INT_UPPER:
                raise JSONError(JSON_INVALID, "integer too long to read back")
            frames[-1][0] += 1
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise JSONError(JSON_INVALID, f"{item!r} is not a JSON number")
            frames[-1][0] += 1
        elif isinstance(item, dict | list | tuple):
            if depth >= MAX_DEPTH:
                raise JSONError(JSON_INVALID, f"nesting deeper than {MAX_DEPTH}")
            key = id(item)
            seen = done.get(key)
            if seen is not None:
                count, below = seen
                if depth + below >= MAX_DEPTH:
                    raise JSONError(JSON_INVALID, f"nesting deeper than {MAX_DEPTH}")
                _add_child(frames[-1], count, below)
                continue
            if key in on_path:
                raise JSONError(JSON_INVALID, "value contains a cycle")
            on_path.add(key)
            frames.append([1, 0])
            stack.append((key, -1))
            if isinstance(item, dict):
                for name, child in item.items():
                    if not isinstance(name, str):
                        raise JSONError(JSON_INVALID, f"object key {name!r} is not a str")
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        else:
            raise JSONError(JSON_INVALID, f"{type(item).__name__} is not a JSON value")


def _add_child(parent: list[int], count: int, below: int) -> None:
    """Count a walked container (``count`` values, ``below`` levels under it) in its parent."""
    parent[0] += count
    if below + 1 > parent[1]:
        parent[1] = below + 1
    if parent[0] > MAX_ITEMS:
        raise JSONError(JSON_INVALID, f"more than {MAX_ITEMS:,} values written out")


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
    # Every opener counts as a candidate when the scan from it (strings read from there on)
    # balances it. A scan from an opener settles every opener it meets outside strings at
    # once, since a scan from that opener would read the rest alike; only openers met inside
    # strings need scans of their own, and those record what they settle in ``settled`` so no
    # stretch is read for the same opener twice. Scans and parse attempts share a budget of two
    # passes over the text (plus 64 KB), a parse attempt costing at least _ATTEMPT_COST, so that
    # hostile text stays linear with a small constant (1 MB in well under a second).
    budget = 2 * len(text) + 65536
    settled: dict[int, tuple[int, int] | None] = {}
    pos = 0
    while budget > 0:
        match = _OPENER.search(text, pos)
        if match is None:
            break
        spans, in_strings, pos = _scan(text, match.start(), None)
        budget -= pos - match.start()
        if not spans and not in_strings:
            continue
        candidates = sorted([*spans, *((opener, -1) for opener in in_strings)])
        for start, end in candidates:
            if budget <= 0:
                break
            if end < 0:  # an opener inside a string of the outer scan: scan from it
                if start not in settled:
                    stop = _scan(text, start, settled)[2]
                    budget -= stop - start
                span = settled[start]
                if span is None:
                    continue
                end = span[1]
            budget -= max(end - start, _ATTEMPT_COST)
            found, value = try_parse_json(text[start:end])
            if found:
                return True, value
    return False, None


def _scan(
    text: str, start: int, settle: dict[int, tuple[int, int] | None] | None
) -> tuple[list[tuple[int, int]], list[int], int]:
    """Match brackets from the opener at ``start``.

    Args:
        settle: When given, receives each opener met outside strings: its span if it is a
            candidate (see below), else None.

    Returns:
        The balanced spans that may parse (nested at most :data:`MAX_DEPTH` deep, with nothing
        outside their strings that JSON forbids there), as ``(start, end)`` in the order they
        close, the outermost last; the openers met inside strings; where the scan stopped (the
        end of the span at ``start``, or where it broke: a mismatched closer, an unterminated
        string, the end of the text).
    """
    spans: list[tuple[int, int]] = []
    in_strings: list[int] = []
    stack: list[int] = []  # open positions
    inner: list[int] = []  # for each, the deepest nesting closed inside it
    clean_from = 0  # the open entries below this index hold a forbidden character
    pos = start
    while True:
        for token in _TOKEN.finditer(text, pos):
            kind = token.lastindex
            if kind == 1:
                stack.append(token.start())
                inner.append(0)
                if settle is not None:
                    settle[token.start()] = None
            elif not stack:
                # Between top-level spans of an outer scan: prose. Closers and junk there are
                # skipped; a quote is no string, so scanning resumes at the next opener.
                if kind == 3:
                    following = _OPENER.search(text, token.start())
                    if following is None:
                        return spans, in_strings, len(text)
                    pos = following.start()
                    break
            elif kind == 2:
                opener = stack.pop()
                depth = inner.pop() + 1
                if (text[opener] == "[") != (token.group() == "]"):
                    return spans, in_strings, token.end()
                level = len(stack)
                if level >= clean_from and depth <= MAX_DEPTH:
                    spans.append((opener, token.end()))
                    if settle is not None:
                        settle[opener] = (opener, token.end())
                elif level < clean_from:
                    clean_from = level
                if level:
                    if inner[-1] < depth:
                        inner[-1] = depth
                elif spans or in_strings or settle is not None:
                    return spans, in_strings, token.end()
                # else nothing so far can parse: go on to the next top-level span in this call,
                # which is cheaper than returning for every "{x}" of a long text.
            elif kind == 3:
                if settle is None:  # a scan of its own needs only what it settles
                    body = token.group()
                    if "{" in body or "[" in body:
                        found = _OPENER.finditer(text, token.start(), token.end())
                        in_strings += [m.start() for m in found]
                if token.group(4) is None:  # unterminated, or a raw control character
                    return spans, in_strings, token.end()
            else:
                clean_from = len(stack)
        else:
            return spans, in_strings, len(text)
