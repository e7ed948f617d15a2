"""Tests for validate_schema: the keyword subset, error locations, order, and broken schemas."""

from __future__ import annotations

import sys
from typing import Any

import msgspec
import pytest

from praxo_actors.core import SchemaError, validate_schema
from praxo_actors.core._schema import compile_validator


def _found(schema: Any, value: Any) -> list[tuple[str, str]]:
    return [(e.path, e.keyword) for e in validate_schema(schema, value)]


# A schema as pydantic v2 generates it for a model with a nested model, an enum and a list.
PYDANTIC = {
    "$defs": {
        "Mode": {"enum": ["r", "w"], "title": "Mode", "type": "string"},
        "Range": {
            "properties": {
                "start": {"minimum": 0, "title": "Start", "type": "integer"},
                "end": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            },
            "required": ["start"],
            "title": "Range",
            "type": "object",
        },
    },
    "properties": {
        "path": {"title": "Path", "type": "string", "minLength": 1},
        "mode": {"$ref": "#/$defs/Mode", "default": "r"},
        "ranges": {"items": {"$ref": "#/$defs/Range"}, "title": "Ranges", "type": "array"},
    },
    "required": ["path"],
    "title": "ReadArgs",
    "type": "object",
    "additionalProperties": False,
}


def test_valid_value_gives_no_errors() -> None:
    """A value that satisfies every keyword gives an empty list."""
    value = {"path": "a.txt", "mode": "w", "ranges": [{"start": 0, "end": None}, {"start": 3}]}
    assert validate_schema(PYDANTIC, value) == []


def test_pydantic_schema_reports_nested_paths() -> None:
    """Errors behind $ref point into the value with JSON Pointers."""
    value = {"path": "", "mode": "x", "ranges": [{"start": -1}, {"end": "9"}], "extra": 1}
    assert _found(PYDANTIC, value) == [
        ("", "additionalProperties"),
        ("/mode", "enum"),
        ("/path", "minLength"),
        ("/ranges/0/start", "minimum"),
        ("/ranges/1", "required"),
        ("/ranges/1/end", "anyOf"),
    ]


def test_error_is_a_frozen_struct() -> None:
    """SchemaError is a frozen msgspec Struct with path, keyword and message."""
    error = validate_schema({"type": "string"}, 1)[0]
    assert isinstance(error, SchemaError)
    assert msgspec.json.decode(msgspec.json.encode(error)) == {
        "path": "",
        "keyword": "type",
        "message": error.message,
    }
    with pytest.raises(AttributeError):
        error.path = "/x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("declared", "value", "ok"),
    [
        ("integer", 1, True),
        ("integer", 1.0, True),
        ("integer", 1.5, False),
        ("integer", True, False),
        ("number", 1, True),
        ("number", False, False),
        ("boolean", 0, False),
        ("null", None, True),
        ("object", [], False),
        ("array", {}, False),
        (["string", "null"], None, True),
        (["string", "null"], 0, False),
        (["integer", "boolean"], True, True),
    ],
)
def test_type(declared: Any, value: Any, ok: bool) -> None:
    """``type`` accepts 1.0 as an integer and never takes a boolean for a number."""
    assert (validate_schema({"type": declared}, value) == []) is ok


@pytest.mark.parametrize(
    ("schema", "value", "ok"),
    [
        ({"enum": [1, "a"]}, 1.0, True),
        ({"enum": [1]}, True, False),
        ({"enum": [True]}, 1, False),
        ({"enum": [{"a": 1}]}, {"a": 1.0}, True),
        ({"enum": [[1, 2]]}, [1, 2, 3], False),
        ({"enum": [None]}, None, True),
        ({"const": {"a": [1, {"b": None}]}}, {"a": [1.0, {"b": None}]}, True),
        ({"const": False}, 0, False),
        ({"const": None}, False, False),
        ({"const": "1"}, 1, False),
    ],
)
def test_json_equality(schema: dict[str, Any], value: Any, ok: bool) -> None:
    """``enum`` and ``const`` compare as JSON: 1 == 1.0, but true != 1."""
    assert (validate_schema(schema, value) == []) is ok


@pytest.mark.parametrize(
    ("items", "ok"),
    [
        ([1, 1.0], False),
        ([1, True], True),
        ([0, False, None, "", [], {}], True),
        ([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}], False),
        ([[1, 2], [2, 1]], True),
        (["a", "b", "a"], False),
    ],
)
def test_unique_items(items: list[Any], ok: bool) -> None:
    """``uniqueItems`` uses JSON equality, member by member."""
    assert (validate_schema({"uniqueItems": True}, items) == []) is ok


def test_lengths_count_code_points() -> None:
    """``minLength``/``maxLength`` count code points, so an emoji is one character."""
    assert validate_schema({"maxLength": 1}, "😀") == []
    assert _found({"minLength": 2}, "😀") == [("", "minLength")]
    assert validate_schema({"minLength": 2.0, "maxLength": 3}, "ab") == []


def test_pattern_searches_anywhere() -> None:
    """``pattern`` uses re.search: unanchored unless the pattern anchors itself."""
    assert validate_schema({"pattern": "b+"}, "abbc") == []
    assert _found({"pattern": "^b"}, "abc") == [("", "pattern")]
    assert validate_schema({"pattern": "^b"}, 5) == []


def test_invalid_pattern_is_an_error_for_every_value() -> None:
    """A pattern Python cannot compile fails with keyword ``pattern``, whatever the value."""
    for value in ("abc", 5, None):
        errors = validate_schema({"pattern": "(unclosed"}, value)
        assert [(e.path, e.keyword) for e in errors] == [("", "pattern")]
        assert "invalid pattern" in errors[0].message


@pytest.mark.parametrize(
    ("step", "value", "ok"),
    [
        (0.1, 0.3, True),
        (0.1, 0.35, False),
        (0.01, 19.99, True),
        (1.5, 4.5, True),
        (2, 7, False),
        (2, 8.0, True),
        (0.0001, 0.0075, True),
        (1e-8, 12391239123, True),
        (0.123456789, 1e308, False),
        (1e-308, 1e308, True),
        (7, 10**400 * 7, True),
        (0.5, 10**400 + 1, True),
        (3, 10**400, False),
    ],
)
def test_multiple_of(step: float, value: float, ok: bool) -> None:
    """``multipleOf`` is exact over decimals (0.3 is a multiple of 0.1) and never overflows."""
    assert (validate_schema({"multipleOf": step}, value) == []) is ok


@pytest.mark.parametrize(
    ("schema", "value", "keyword"),
    [
        ({"minimum": 1}, 0, "minimum"),
        ({"maximum": 1}, 1.5, "maximum"),
        ({"exclusiveMinimum": 1}, 1, "exclusiveMinimum"),
        ({"exclusiveMaximum": 1.0}, 1, "exclusiveMaximum"),
        ({"minimum": 1.5}, 10**400, None),
        ({"maximum": 1e308}, 10**400, "maximum"),
        ({"minimum": 5}, True, None),
        ({"minItems": 2}, [1], "minItems"),
        ({"maxItems": 1}, [1, 2], "maxItems"),
        ({"minItems": 5}, "short", None),
    ],
)
def test_bounds(schema: dict[str, Any], value: Any, keyword: str | None) -> None:
    """Numeric and size bounds apply to their own types only, exactly, even for huge ints."""
    assert _found(schema, value) == ([("", keyword)] if keyword else [])


def test_required_and_additional_properties_point_at_the_object() -> None:
    """Missing and extra properties are reported at the object, one error per property."""
    schema = {
        "properties": {"inner": {"required": ["a", "b"], "additionalProperties": False}},
    }
    errors = validate_schema(schema, {"inner": {"z": 1, "c": 2}})
    assert [(e.path, e.keyword) for e in errors] == [
        ("/inner", "required"),
        ("/inner", "required"),
        ("/inner", "additionalProperties"),
        ("/inner", "additionalProperties"),
    ]
    assert ["'a'" in errors[0].message, "'b'" in errors[1].message] == [True, True]
    assert ["'c'" in errors[2].message, "'z'" in errors[3].message] == [True, True]


def test_additional_properties_schema_checks_each_extra_member() -> None:
    """A schema in ``additionalProperties`` validates the members ``properties`` does not name."""
    schema = {"properties": {"a": {}}, "additionalProperties": {"type": "integer"}}
    assert _found(schema, {"a": "x", "b": 1, "c": "y"}) == [("/c", "type")]


def test_items_applies_to_every_item() -> None:
    """``items`` is one schema for all items and reports each failing index."""
    schema = {"items": {"type": "object", "properties": {"name": {"type": "string"}}}}
    assert _found(schema, [{"name": 1}, {"name": "ok"}, 3]) == [
        ("/0/name", "type"),
        ("/2", "type"),
    ]


def test_false_schema_reports_keyword_false() -> None:
    """A ``false`` sub-schema fails with keyword ``false`` where it meets a value."""
    assert _found({"properties": {"secret": False}}, {"secret": 1}) == [("/secret", "false")]
    assert _found({"items": False}, [1, 2]) == [("/0", "false"), ("/1", "false")]
    assert _found(False, None) == [("", "false")]
    assert validate_schema(True, {"anything": [1]}) == []


def test_applicators() -> None:
    """allOf passes errors through; anyOf, oneOf and not give one error at the value."""
    assert _found({"allOf": [{"type": "integer"}, {"minimum": 3}]}, 1.5) == [
        ("", "type"),
        ("", "minimum"),
    ]
    assert _found({"anyOf": [{"type": "string"}, {"type": "null"}]}, 1) == [("", "anyOf")]
    assert _found({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 5) == [("", "oneOf")]
    assert _found({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, -5) == []
    assert _found({"oneOf": [{"type": "string"}, {"type": "null"}]}, 1) == [("", "oneOf")]
    assert _found({"not": {"type": "string"}}, "x") == [("", "not")]
    assert _found({"not": {"type": "string"}}, 1) == []


def test_any_of_message_names_the_closest_branch() -> None:
    """The anyOf message names the failure of the branch that came closest."""
    schema = {"anyOf": [{"type": "string"}, {"required": ["a"], "type": "object"}]}
    (error,) = validate_schema(schema, {})
    assert "closest" in error.message
    assert "'a'" in error.message


def test_refs_into_defs_and_definitions() -> None:
    """``$ref`` resolves ``#/$defs/...``, ``#/definitions/...`` and the root ``#``."""
    schema = {
        "definitions": {"n": {"type": "integer"}},
        "$defs": {"s": {"type": "string"}},
        "properties": {"a": {"$ref": "#/definitions/n"}, "b": {"$ref": "#/$defs/s"}},
    }
    assert _found(schema, {"a": "x", "b": 1}) == [("/a", "type"), ("/b", "type")]
    tree = {"type": "object", "properties": {"kids": {"items": {"$ref": "#"}}}}
    deep = {"kids": [{"kids": [{"kids": [1]}]}]}
    assert _found(tree, deep) == [("/kids/0/kids/0/kids/0", "type")]


def test_ref_pointers_are_unescaped_and_percent_decoded() -> None:
    """``~1``, ``~0`` and percent escapes in a reference are decoded."""
    schema = {
        "$defs": {"a/b": {"type": "string"}, "t~x": {"type": "integer"}, "p%q": {"type": "null"}},
        "properties": {
            "s": {"$ref": "#/$defs/a~1b"},
            "t": {"$ref": "#/$defs/t~0x"},
            "p": {"$ref": "#/$defs/p%25q"},
        },
    }
    assert validate_schema(schema, {"s": "x", "t": 1, "p": None}) == []
    assert _found(schema, {"s": 1, "t": "x", "p": 0}) == [
        ("/p", "type"),
        ("/s", "type"),
        ("/t", "type"),
    ]


@pytest.mark.parametrize(
    "ref", ["#/$defs/missing", "other.json#/x", "https://example.com/s", "#anchor", 5]
)
def test_unresolvable_ref_is_an_error(ref: Any) -> None:
    """A reference that cannot be resolved gives keyword ``$ref``, never an exception."""
    assert _found({"$defs": {}, "$ref": ref}, 1) == [("", "$ref")]


def test_ref_cycle_is_an_error() -> None:
    """A reference loop that never descends into the value fails with ``$ref``."""
    schema = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
    assert _found(schema, 1) == [("", "$ref")]
    mutual = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}}
    mutual["$ref"] = "#/$defs/a"
    assert ("", "$ref") in _found(mutual, "x")


def _nested(depth: int, kind: str) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


@pytest.mark.parametrize(
    ("schema", "kind", "found"),
    [
        # Each pair of branches reaches the root again at the same place: without replaying
        # the first branch's evaluation the work doubles at every level (2**150 here).
        (
            {"allOf": [{"items": {"$ref": "#"}}, {"items": {"$ref": "#"}}], "type": "string"},
            "list",
            [("/0" * i, "type") for i in range(151)],
        ),
        (
            {"items": {"$ref": "#"}, "not": {"items": {"$ref": "#"}}},
            "list",
            [("/0" * 150, "not")],
        ),
        (
            {"oneOf": [{"items": {"$ref": "#"}}, {"items": {"$ref": "#"}}, {"type": "string"}]},
            "list",
            [("", "oneOf")],
        ),
        (
            {
                "properties": {"a": {"$ref": "#"}},
                "anyOf": [{"properties": {"a": {"$ref": "#"}}}, {"type": "integer"}],
            },
            "dict",
            [],
        ),
    ],
)
def test_branches_reaching_one_ref_at_one_place_are_evaluated_once(
    schema: Any, kind: str, found: list[tuple[str, str]]
) -> None:
    """Two branches that apply the same ``$ref`` to the same value at the same place share one
    evaluation and its errors, once: a value 150 levels deep validates (each error once)."""
    assert sorted(_found(schema, _nested(150, kind))) == sorted(found)
    errors = validate_schema(schema, _nested(150, kind))
    assert all(len(error.message) < 2_000 for error in errors)  # a nested "closest" is cut


@pytest.mark.parametrize(
    ("schema", "keyword"),
    [
        (3, "schema"),
        ([{"type": "string"}], "schema"),
        ({"type": "text"}, "type"),
        ({"type": []}, "type"),
        ({"enum": "abc"}, "enum"),
        ({"minLength": -1}, "minLength"),
        ({"maxItems": 1.5}, "maxItems"),
        ({"minimum": "0"}, "minimum"),
        ({"maximum": True}, "maximum"),
        ({"multipleOf": 0}, "multipleOf"),
        ({"required": "name"}, "required"),
        ({"properties": []}, "properties"),
        ({"additionalProperties": "no"}, "additionalProperties"),
        ({"items": [{"type": "string"}]}, "items"),
        ({"uniqueItems": 1}, "uniqueItems"),
        ({"anyOf": []}, "anyOf"),
        ({"allOf": {}}, "allOf"),
        ({"not": 1}, "not"),
        ({"pattern": 7}, "pattern"),
    ],
)
def test_broken_schema_fails_closed(schema: Any, keyword: str) -> None:
    """A malformed schema is an error naming the broken keyword, for any value."""
    for value in ("x", 1, None):
        assert _found(schema, value) == [("", keyword)]


def test_broken_schema_inside_not_or_any_of_still_fails() -> None:
    """A broken sub-schema is reported even where its failure would otherwise count as a pass."""
    assert ("", "minLength") in _found({"not": {"minLength": -1}}, "x")
    assert _found({"anyOf": [{"maxLength": "x"}, {"type": "integer"}]}, 1) == [("", "maxLength")]
    assert _found({"properties": {"a": 5}}, {"a": 1}) == [("/a", "schema")]


def test_unknown_keywords_are_ignored() -> None:
    """Keywords outside the subset change nothing."""
    schema = {"type": "string", "format": "email", "x-vendor": {"type": "integer"}, "title": "T"}
    assert validate_schema(schema, "not an email") == []


def test_errors_are_ordered_by_location_then_keyword() -> None:
    """Errors come root first, items by numeric index, members by key, keywords in fixed order."""
    schema = {
        "properties": {"b": {"type": "string"}, "a": {"type": "string"}},
        "items": {"type": "string"},
        "minimum": 5,
        "type": "string",
    }
    assert _found(schema, {"b": 1, "a": 1}) == [("", "type"), ("/a", "type"), ("/b", "type")]
    many = list(range(12))
    assert [p for p, _ in _found(schema, many)] == [""] + [f"/{i}" for i in range(12)]
    reordered = dict(reversed(list(schema.items())))
    assert _found(reordered, 3) == _found(schema, 3) == [("", "type"), ("", "minimum")]


def test_pointer_escapes_member_names() -> None:
    """Member names with ``/`` and ``~`` are escaped in error paths."""
    schema = {"additionalProperties": {"type": "integer"}}
    assert _found(schema, {"a/b": "x", "c~d": "y"}) == [("/a~1b", "type"), ("/c~0d", "type")]


def test_mutated_schema_is_validated_afresh() -> None:
    """Changing a schema between calls changes the result (nothing is cached by identity)."""
    schema: dict[str, Any] = {"type": "object", "properties": {"n": {"enum": [1, 2]}}}
    assert validate_schema(schema, {"n": 3}) != []
    schema["properties"]["n"]["enum"].append(3)
    assert validate_schema(schema, {"n": 3}) == []
    schema["properties"]["n"] = {"type": "string"}
    assert _found(schema, {"n": 3}) == [("/n", "type")]


def test_schema_that_cannot_be_encoded_still_validates() -> None:
    """Schemas with integers beyond 64 bits are validated (uncached) like any other."""
    assert _found({"const": 10**30}, 10**30 + 1) == [("", "const")]
    assert validate_schema({"maximum": 10**30}, 10**29) == []


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    """A value nested past the recursion limit gives one ``schema`` error at the root."""
    value: Any = 1
    for _ in range(sys.getrecursionlimit() + 10):
        value = [value]
    assert _found({"items": {"$ref": "#"}}, value) == [("", "schema")]


def test_deep_schema_is_an_error_not_a_crash() -> None:
    """A schema nested past the recursion limit gives one ``schema`` error at the root."""
    schema: Any = {"type": "array"}
    for _ in range(sys.getrecursionlimit() + 10):
        schema = {"items": schema}
    assert _found(schema, [[1]]) == [("", "schema")]


def test_inputs_are_not_mutated() -> None:
    """Validation leaves both the schema and the value unchanged."""
    schema = msgspec.json.decode(msgspec.json.encode(PYDANTIC))
    value = {"path": "", "ranges": [{"start": -1}], "extra": [1]}
    before = msgspec.json.encode([schema, value])
    validate_schema(schema, value)
    assert msgspec.json.encode([schema, value]) == before


# Each schema beside the same schema with a keyword that changes nothing for these values but
# keeps the validator off its fast paths (type and enum alone; anyOf of types alone).
FAST_AND_GENERAL = [
    ({"type": "string"}, {"type": "string", "minLength": 0}),
    ({"type": "integer"}, {"type": "integer", "minimum": -(10**18)}),
    ({"type": ["number", "null"]}, {"type": ["number", "null"], "minLength": 0}),
    ({"enum": ["en", 1, None]}, {"enum": ["en", 1, None], "minLength": 0}),
    ({"type": "string", "enum": ["a", "b"]}, {"type": "string", "enum": ["a", "b"], "minItems": 0}),
    (
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"anyOf": [{"type": "string"}, {"type": "null"}], "minLength": 0},
    ),
    (
        {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
        {"anyOf": [{"type": "integer"}, {"type": "boolean"}], "minLength": 0},
    ),
    ({"title": "nothing to check"}, {"title": "nothing to check", "minLength": 0}),
]
VALUES = [None, True, 0, 1, 2.0, 2.5, "", "a", "en", [], [1], {}, {"a": 1}, (1,)]


@pytest.mark.parametrize(("fast", "general"), FAST_AND_GENERAL)
def test_fast_paths_give_what_the_general_check_gives(fast: Any, general: Any) -> None:
    """Schemas of ``type`` / ``enum`` alone, or an anyOf of types, report as the general path."""
    for value in VALUES:
        assert validate_schema(fast, value) == validate_schema(general, value), value
        assert validate_schema({"items": fast}, [value]) == validate_schema(
            {"items": general}, [value]
        )


def test_a_compiled_validator_gives_what_validate_schema_gives() -> None:
    """``compile_validator(schema)(value)`` is ``validate_schema(schema, value)``, schema faults
    and deep schemas included."""
    deep: Any = {"type": "array"}
    for _ in range(sys.getrecursionlimit() + 10):
        deep = {"items": deep}
    for schema, value in [
        (PYDANTIC, {"path": "", "ranges": [{"start": -1}], "extra": [1]}),
        (PYDANTIC, {"path": "a"}),
        ({"type": "texts"}, 1),
        (True, 1),
        (False, 1),
        (deep, [[1]]),
    ]:
        assert compile_validator(schema)(value) == validate_schema(schema, value)
