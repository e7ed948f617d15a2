"""JSON group: ``parse_json``, ``encode_json`` and ``extract_json``.

A case has ``op``, an ``input`` (or ``input_repeat``: ``[[text, count], ...]``, concatenated, for
inputs too long to spell out) and ``expect`` or ``error``. Expected values are compared strictly:
an integer never equals a float, and ``-0.0`` differs from ``0.0``. ``expect_depth`` instead of
``expect`` checks only how deeply the parsed value nests.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from conformance._runner import CaseFailure, expect_outcome
from praxo_actors.core import encode_json, extract_json, parse_json

_OPS: dict[str, Callable[[Any], Any]] = {
    "parse_json": parse_json,
    "encode_json": encode_json,
    "extract_json": extract_json,
}


def run_case(case: dict[str, Any]) -> None:
    """Run one JSON case; raise on mismatch."""
    op = _OPS[case["op"]]
    value = case_input(case)
    result = expect_outcome(case, lambda: op(value))
    if "expect" in case and not same_json(result, case["expect"]):
        raise CaseFailure(f"expected {case['expect']!r}, got {result!r} (types differ)")
    if "expect_depth" in case and "error" not in case:
        depth = _depth(result)
        if depth != case["expect_depth"]:
            raise CaseFailure(f"expected depth {case['expect_depth']}, got {depth}")


def case_input(case: dict[str, Any]) -> Any:
    """Return a case's input, expanding ``input_repeat``."""
    if "input_repeat" in case:
        return "".join(text * count for text, count in case["input_repeat"])
    return case["input"]


def same_json(a: Any, b: Any) -> bool:
    """Return whether two JSON values are equal, telling ints from floats and -0.0 from 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[key], b[key]) for key in a)
    return bool(a == b)


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, list | dict):
        depth += 1
        items = list(value.values()) if isinstance(value, dict) else value
        # Vectors nest along the first element, which keeps this walk iterative.
        value = items[0] if items else None
    return depth
