"""Calls written as Python: ``[get_weather(city="Oslo"), get_time()]``.

- ``pythonic`` (Llama 3.2 and 4, ToolACE): a list of calls inside
  ``<|python_start|>…<|python_end|>``, or a bare list that begins a line.
- ``lfm2``: ``<|tool_call_start|>[…]<|tool_call_end|>``; the body may also be JSON calls.

The list is read with :func:`ast.parse` and only literals are accepted: strings, numbers,
``True``/``False``/``None`` (and JSON's ``true``/``false``/``null``), lists, tuples (as lists)
and dicts with string keys. Calls take keyword arguments only; a positional argument, ``**``,
a name or an expression is ``TOOL_CALL_INVALID_ARGUMENTS``; a body that is not Python is
``TOOL_CALL_INVALID_JSON`` (the code of a body that does not parse). Python's parser bounds
nesting (about 200 levels) and stays linear in the length of the text.
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from typing import Any

from praxo_actors._errors import ToolCallError
from praxo_actors.codes import (
    TOOL_CALL_INVALID_ARGUMENTS,
    TOOL_CALL_INVALID_JSON,
    TOOL_CALL_INVALID_NAME,
    TOOL_CALL_MALFORMED,
)
from praxo_actors.core._formats._scan import (
    Format,
    Reader,
    Section,
    Text,
    attempt,
    call,
    closer_pattern,
    error,
    find_outside_strings,
    json_calls,
)
from praxo_actors.models import ToolCall

__all__ = ["FORMATS", "python_call", "python_calls", "python_literal"]

_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


def python_calls(source: str) -> list[ToolCall]:
    """Return the calls of a Python list of calls.

    Raises:
        ToolCallError: ``TOOL_CALL_INVALID_JSON`` when it is not Python,
            ``TOOL_CALL_MALFORMED`` when it is not a list of calls, and the argument codes.
    """
    tree = _parse(source)
    if not isinstance(tree, ast.List | ast.Tuple) or not all(
        isinstance(item, ast.Call) for item in tree.elts
    ):
        raise ToolCallError(TOOL_CALL_MALFORMED, "expected a list of calls")
    return [_call(item) for item in tree.elts]  # type: ignore[arg-type]


def python_call(source: str, *, method: str | None = None) -> ToolCall:
    """Return the one call ``source`` holds; with ``method``, ``name.method(…)`` names ``name``."""
    tree = _parse(source)
    if not isinstance(tree, ast.Call):
        raise ToolCallError(TOOL_CALL_MALFORMED, "expected a call")
    if method is not None:
        func = tree.func
        if not (isinstance(func, ast.Attribute) and func.attr == method):
            raise ToolCallError(TOOL_CALL_MALFORMED, f"expected NAME.{method}(...)")
        tree = ast.Call(func=func.value, args=tree.args, keywords=tree.keywords)
    return _call(tree)


def python_literal(source: str) -> Any:
    """Return the value of a Python literal (JSON's ``true``/``false``/``null`` too).

    Raises:
        ToolCallError: ``TOOL_CALL_INVALID_JSON`` when it is not Python,
            ``TOOL_CALL_INVALID_ARGUMENTS`` when it is not a literal.
    """
    return _literal(_parse(source))


def _parse(source: str) -> ast.expr:
    try:
        if "\\" not in source:  # only a backslash can make an invalid escape, which warns
            return ast.parse(source.strip(), mode="eval").body
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the literal is still read as Python reads it
            return ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ToolCallError(TOOL_CALL_INVALID_JSON, f"not a Python call list: {exc}") from None


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise ToolCallError(TOOL_CALL_INVALID_NAME, "a call must name a function")


def _call(node: ast.Call) -> ToolCall:
    name = _dotted(node.func)
    if node.args:
        raise ToolCallError(TOOL_CALL_INVALID_ARGUMENTS, f"{name}: positional arguments")
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise ToolCallError(TOOL_CALL_INVALID_ARGUMENTS, f"{name}: ** arguments")
        arguments[keyword.arg] = _literal(keyword.value)
    return call(name, arguments)


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, str | bool | int):
            return value
        if isinstance(value, float) and math.isfinite(value):
            return value
    elif isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    elif isinstance(node, ast.List | ast.Tuple):
        return [_literal(item) for item in node.elts]
    elif isinstance(node, ast.Dict):
        result = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise ToolCallError(TOOL_CALL_INVALID_ARGUMENTS, "dict keys must be strings")
            result[key.value] = _literal(item)
        return result
    elif (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub | ast.UAdd)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float)
    ):
        number = _literal(node.operand)
        return -number if isinstance(node.op, ast.USub) else number
    raise ToolCallError(TOOL_CALL_INVALID_ARGUMENTS, "arguments must be literals")


def _wrapped(close: str, *, json_too: bool) -> Reader:
    closer = closer_pattern(close, python=True)

    def read(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
        text = source.text
        found = find_outside_strings(text, match.end(), closer, python=True)
        if found is None:
            return error(match.start(), len(text), TOOL_CALL_MALFORMED, f"no {close}")
        body = text[match.end() : found.start()]
        head = body.lstrip()[:2].replace(" ", "")
        if json_too and (head.startswith("{") or head == "[{"):
            return attempt(match.start(), found.end(), lambda: json_calls(body)), found.end()
        return attempt(match.start(), found.end(), lambda: python_calls(body)), found.end()

    return read


def _read_bare(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
    """Read a bare list that begins a line: ``[name(…), …]``."""
    start, text = match.start(), source.text
    line = text.rfind("\n", 0, start) + 1
    if text[line:start].strip(" \t"):
        return None, match.end()  # inside a line of prose
    end = source.python.end(start)
    if end is None:
        return error(start, len(source.text), TOOL_CALL_MALFORMED, "unclosed call list")
    body = source.text[start:end]
    return attempt(start, end, lambda: python_calls(body)), end


# Not anchored with ^: a pattern whose branches all begin with a literal is searched far faster.
_BARE = r"\[(?=[ \t]*[A-Za-z_][\w.]*[ \t]*\()"

_READ_WRAPPED = _wrapped("<|python_end|>", json_too=False)


def _read_pythonic(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
    if match.group().startswith("<"):
        return _READ_WRAPPED(source, match)
    return _read_bare(source, match)


FORMATS = (
    Format.build("pythonic", rf"<\|python_start\|>|{_BARE}", _read_pythonic),
    Format.build("lfm2", r"<\|tool_call_start\|>", _wrapped("<|tool_call_end|>", json_too=True)),
)
