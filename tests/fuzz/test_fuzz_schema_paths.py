"""Property tests: validate_schema on arbitrary schemas and values, PathPolicy on arbitrary text."""

from __future__ import annotations

import fnmatch
from typing import Any

import jsonschema
import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from praxo_actors.core import PathPolicy, PathPolicyError, SchemaError, validate_schema

FUZZ = settings(
    max_examples=2000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

NAMES = st.sampled_from(["a", "b", "c", "a/b", "~"])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.integers()
    | st.sampled_from([0.0, 1.0, -2.5, 0.1, 0.3, 1e308, 10**30])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "a", "ab", "😀", "123", "b9"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NAMES, inner, max_size=4),
    max_leaves=6,
)

# Leaf schemas of the subset, combined into trees below (cheaper to draw than keyword by keyword).
LEAVES: list[Any] = [
    True,
    False,
    {},
    {"type": "string"},
    {"type": "integer"},
    {"type": "number"},
    {"type": ["integer", "null"]},
    {"type": ["object", "array"]},
    {"type": "boolean"},
    {"enum": [1, "a", None, [1], {"a": 1}]},
    {"enum": [True, 0.0]},
    {"const": 1.0},
    {"const": {"a": [1, None]}},
    {"const": False},
    {"minLength": 1},
    {"maxLength": 2, "type": "string"},
    {"pattern": "^a"},
    {"pattern": "[0-9]+$"},
    {"minimum": 0},
    {"maximum": 2.5},
    {"exclusiveMinimum": 0},
    {"exclusiveMaximum": 3},
    {"multipleOf": 2},
    {"multipleOf": 3, "minimum": -3},
    {"required": ["a"]},
    {"required": ["a", "b"], "type": "object"},
    {"minItems": 1},
    {"maxItems": 2},
    {"uniqueItems": True},
    {"uniqueItems": False, "type": "array"},
    {"title": "ignored", "x-vendor": {"type": "string"}},
]
# Broken leaves: malformed keyword values, non-schemas and references.
JUNK: list[Any] = [
    5,
    None,
    "string",
    [{}],
    {"type": "text"},
    {"type": []},
    {"minLength": -1},
    {"maxItems": 1.5},
    {"pattern": "("},
    {"pattern": 7},
    {"enum": "abc"},
    {"items": [{}]},
    {"anyOf": []},
    {"required": "a"},
    {"multipleOf": 0},
    {"minimum": "0"},
    {"properties": []},
    {"additionalProperties": 1},
    {"$ref": "#/nope"},
    {"$ref": "#"},
    {"$ref": "#/$defs/a"},
    {"$ref": "#/$defs/a~1b"},
    {"$ref": "#/$defs/%61"},
    {"$ref": "#/definitions/x"},
    {"$ref": "other.json#/a"},
    {"$ref": 3},
]


def _trees(leaves: list[Any]) -> st.SearchStrategy[Any]:
    """Return schemas built from ``leaves`` under properties, items and the applicators."""
    base = st.sampled_from(leaves)
    dict_leaf = st.sampled_from([leaf for leaf in leaves if isinstance(leaf, dict)])

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        some = st.lists(children, min_size=1, max_size=3)
        parts: st.SearchStrategy[dict[str, Any]] = st.one_of(
            st.builds(lambda c: {"properties": c}, st.dictionaries(NAMES, children, max_size=3)),
            st.builds(lambda c: {"additionalProperties": c}, children),
            st.builds(lambda c: {"items": c}, children),
            st.builds(lambda c: {"allOf": c}, some),
            st.builds(lambda c: {"anyOf": c}, some),
            st.builds(lambda c: {"oneOf": c}, some),
            st.builds(lambda c: {"not": c}, children),
        )
        return st.builds(lambda leaf, part: {**leaf, **part}, dict_leaf, parts)

    return st.recursive(base, extend, max_leaves=6)


WELL_FORMED = _trees(LEAVES)
SCHEMA_ISH = st.builds(
    lambda schema, defs: {**schema, "$defs": defs} if isinstance(schema, dict) else schema,
    _trees(LEAVES + JUNK),
    st.dictionaries(st.sampled_from(["a", "b", "a/b"]), _trees(LEAVES + JUNK), max_size=2),
)


@FUZZ
@given(schema=SCHEMA_ISH, value=VALUES)
def test_validate_schema_never_raises(schema: Any, value: Any) -> None:
    """Any schema-ish value and JSON value give a list of SchemaError, the same every time."""
    errors = validate_schema(schema, value)
    assert isinstance(errors, list)
    for error in errors:
        assert isinstance(error, SchemaError)
        assert error.path == "" or error.path.startswith("/")
        assert error.keyword and error.message
    assert validate_schema(schema, value) == errors


def _has_big_float(value: Any) -> bool:
    if isinstance(value, float):
        return abs(value) >= 2**53
    if isinstance(value, list):
        return any(_has_big_float(item) for item in value)
    if isinstance(value, dict):
        return any(_has_big_float(item) for item in value.values())
    return False


def test_multiple_of_is_exact_where_floating_point_division_is_not() -> None:
    """The case the comparison above leaves out, checked on its own."""
    big = 6.400000000000001e16  # 64000000000000008 in binary, written 64000000000000010
    assert int(big) % 3 == 0 and 64000000000000010 % 3 != 0
    assert [e.keyword for e in validate_schema({"multipleOf": 3}, big)] == ["multipleOf"]
    assert jsonschema.Draft202012Validator({"multipleOf": 3}).is_valid(big)
    assert validate_schema({"multipleOf": 5}, big) == []


@FUZZ
@given(schema=WELL_FORMED, value=VALUES)
def test_verdict_matches_jsonschema(schema: Any, value: Any) -> None:
    """On well-formed schemas with integer steps, validity agrees with jsonschema (2020-12).

    Except ``multipleOf`` on a float of 2**53 or more: jsonschema is exact over the float's
    binary value, ``validate_schema`` over the decimal it is written as (its repr), and above
    2**53 the two are different whole numbers."""
    errors = validate_schema(schema, value)
    if not ("multipleOf" in repr(schema) and _has_big_float(value)):
        assert (errors == []) is jsonschema.Draft202012Validator(schema).is_valid(value), errors
    copy = msgspec.json.decode(msgspec.json.encode(schema))
    assert validate_schema(copy, value) == errors


CODES = {"PATH_INVALID", "PATH_OUTSIDE_ROOTS", "PATH_DENIED"}
PARTS = ["/", "//", ".", "..", "a", "ab", "b", ".git", "x.pem", ".env", "\\", "~", " ", "srv"]
PATH_TEXT = st.lists(st.sampled_from(PARTS), max_size=10).map("".join)
ROOTS = st.lists(st.lists(st.sampled_from(PARTS[:-1]), max_size=5).map(lambda p: "/" + "".join(p)))
DENY = ["*.pem", ".env*", ".git", "b"]


@FUZZ
@given(
    roots=ROOTS.filter(bool),
    path=PATH_TEXT | st.text(max_size=12),
    base=st.none() | PATH_TEXT,
)
def test_path_policy_admits_only_paths_under_a_root(
    roots: list[str], path: str, base: str | None
) -> None:
    """check raises only coded PathPolicyErrors, and what it admits lies under a root."""
    policy = PathPolicy(roots, deny=DENY)
    try:
        result = policy.check(path, base)
    except PathPolicyError as exc:
        assert exc.code in CODES
        return
    assert result.startswith("/")
    assert "//" not in result
    assert ".." not in result.split("/")
    assert "." not in result.split("/")
    under = [r for r in policy.roots if result == r or result.startswith(r.rstrip("/") + "/")]
    assert under
    deepest = max(under, key=len)
    below = result[len(deepest) :].split("/")
    assert not any(fnmatch.fnmatchcase(c, p) for c in below if c for p in DENY)
    assert policy.check(result) == result
