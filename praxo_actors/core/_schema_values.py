"""JSON value helpers of the schema validator: kinds, JSON equality, duplicates, exact multiples."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

__all__ = [
    "KINDS",
    "describe",
    "first_duplicate",
    "is_member",
    "is_multiple",
    "json_equal",
    "kind_name",
    "kind_of",
]

#: The JSON kind of each exact Python type of a JSON value (subclasses go through kind_of).
KINDS: dict[type, str] = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def kind_of(value: Any) -> str | None:
    """Classify instances of subclasses of the JSON types (``KINDS`` has the exact types)."""
    for base, name in (
        (bool, "boolean"),
        (int, "integer"),
        (float, "number"),
        (str, "string"),
        (list, "array"),
        (dict, "object"),
    ):
        if isinstance(value, base):
            return name
    return None


def kind_name(kind: str | None, value: Any) -> str:
    """Name a value's kind for a message."""
    return kind if kind is not None else f"a non-JSON value ({type(value).__name__})"


def describe(value: Any) -> str:
    """Name any value's kind for a message."""
    return kind_name(KINDS.get(type(value)) or kind_of(value), value)


def is_multiple(value: int | float, step: int | float) -> bool:
    """Tell whether ``value`` is an integer multiple of ``step``, exactly, as decimals."""
    if type(value) is int and type(step) is int:
        return value % step == 0
    try:
        quotient = _decimal(value) / _decimal(step)
    except (ValueError, OverflowError):  # a non-finite value is a multiple of nothing
        return False
    return quotient.denominator == 1


def _decimal(number: int | float) -> Fraction:
    """Return a number as the exact decimal it is written as (a float as its shortest repr)."""
    if isinstance(number, int):
        return Fraction(int(number))
    return Fraction(repr(float(number)))


def is_member(value: Any, kind: str | None, options: list[Any]) -> bool:
    """Tell whether ``value`` (of JSON ``kind``) is JSON-equal to one of ``options``."""
    if kind == "string" or kind == "null":
        return value in options  # for these kinds Python equality is JSON equality
    return any(json_equal(value, option) for option in options)


def json_equal(a: Any, b: Any) -> bool:
    """Compare JSON values: numbers by value (``1 == 1.0``), booleans never equal to numbers."""
    type_a, type_b = type(a), type(b)
    if type_a is not type_b or type_a not in KINDS:
        kind_a = KINDS.get(type_a) or kind_of(a)
        kind_b = KINDS.get(type_b) or kind_of(b)
        if kind_a != kind_b and not {kind_a, kind_b} <= {"integer", "number"}:
            return False
        if kind_a is None:
            return a is b
        type_a = list if kind_a == "array" else dict if kind_a == "object" else type_a
    if type_a is list:
        return len(a) == len(b) and all(map(json_equal, a, b))
    if type_a is dict:
        return len(a) == len(b) and all(k in b and json_equal(v, b[k]) for k, v in a.items())
    return bool(a == b)


def _hash_key(value: Any) -> Any:
    """Return a hashable key, equal for two values exactly when they are JSON-equal."""
    kind = KINDS.get(type(value)) or kind_of(value)
    if kind in ("string", "null", "integer", "number"):
        return value  # equal ints and floats hash alike; booleans are tagged below
    if kind == "boolean":
        return ("boolean", bool(value))
    if kind == "array":
        return ("array", tuple(map(_hash_key, value)))
    if kind == "object":
        return ("object", frozenset((k, _hash_key(v)) for k, v in value.items()))
    return ("other", id(value))


def first_duplicate(items: list[Any]) -> tuple[int, int] | None:
    """Return the indexes of the first two equal items, or None."""
    seen: dict[Any, int] = {}
    for index, item in enumerate(items):
        first = seen.setdefault(_hash_key(item), index)
        if first != index:
            return first, index
    return None
