"""Run validate_schema over the JSON-Schema-Test-Suite draft 2020-12 files of the subset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from praxo_actors.core import validate_schema

SUITE = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "external" / "JSON-Schema-Test-Suite"
).resolve() / "draft2020-12"

# The keyword files of the subset.
FILES = [
    *("type", "enum", "const", "properties", "required", "additionalProperties", "items"),
    *("minItems", "maxItems", "uniqueItems", "minLength", "maxLength", "pattern"),
    *("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    *("allOf", "anyOf", "oneOf", "not", "boolean_schema", "ref", "defs"),
]

# Keywords whose value is a schema, a list of schemas, or a map of names to schemas.
SCHEMA_KEYWORDS = {"items", "additionalProperties", "not"}
SCHEMA_LIST_KEYWORDS = {"allOf", "anyOf", "oneOf"}
SCHEMA_MAP_KEYWORDS = {"properties", "$defs", "definitions"}
# The remaining supported keywords, plus annotations that never affect validity.
LEAF_KEYWORDS = {
    "$ref",
    "type",
    "enum",
    "const",
    "required",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "$schema",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
}

# Tests that use only supported keywords yet rely on what the subset leaves out (by file, group
# description and test description; "*" matches every test of a group).
EXCLUDED: dict[tuple[str, str, str], str] = {
    # Python's re has no \p{...} property escapes; the subset is defined as Python re.search,
    # so such a pattern is a schema error (keyword "pattern"), not an ECMA-262 regex.
    ("pattern", "pattern with Unicode property escape requires unicode mode", "*"): (
        "Unicode property escapes are ECMA-262 only; Python's re rejects them"
    ),
}


# Keywords of the suite's files that the subset leaves out, and why a test using them is skipped.
UNSUPPORTED = {
    "$id": "changes the base URI; only JSON Pointers into the given document resolve",
    "$anchor": "plain-name fragments are not resolved; only JSON Pointers are",
    "prefixItems": "tuple validation is outside the subset (items is one schema for all items)",
    "patternProperties": "outside the subset (additionalProperties sees properties only)",
    "propertyNames": "outside the subset",
    "dependentSchemas": "outside the subset",
    "unevaluatedProperties": "annotation-dependent keywords are outside the subset",
    "if": "conditional keywords are outside the subset",
}


def _unsupported(schema: Any) -> str | None:
    """Return why a schema needs more than the subset's keywords and local references, or None."""
    if isinstance(schema, bool):
        return None
    if not isinstance(schema, dict):
        return "not a schema"
    for keyword, value in schema.items():
        if keyword in SCHEMA_KEYWORDS:
            reasons = [_unsupported(value)]
        elif keyword in SCHEMA_LIST_KEYWORDS:
            reasons = [_unsupported(sub) for sub in value]
        elif keyword in SCHEMA_MAP_KEYWORDS:
            reasons = [_unsupported(sub) for sub in value.values()]
        elif keyword == "$ref":
            local = value == "#" or value.startswith("#/")
            reasons = [None if local else "remote and anchor references are not resolved"]
        elif keyword in LEAF_KEYWORDS:
            reasons = []
        else:
            reasons = [f"{keyword}: {UNSUPPORTED.get(keyword, 'outside the subset')}"]
        reason = next((r for r in reasons if r), None)
        if reason:
            return reason
    return None


def _cases() -> list[Any]:
    cases = []
    for name in FILES:
        path = SUITE / f"{name}.json"
        if not path.is_file():
            continue
        for group in json.loads(path.read_text(encoding="utf-8")):
            unsupported = _unsupported(group["schema"])
            for test in group["tests"]:
                reason = EXCLUDED.get((name, group["description"], test["description"]))
                reason = reason or EXCLUDED.get((name, group["description"], "*"))
                marks = []
                if unsupported:
                    marks.append(pytest.mark.skip(reason=unsupported))
                elif reason:
                    marks.append(pytest.mark.skip(reason=reason))
                cases.append(
                    pytest.param(
                        group["schema"],
                        test["data"],
                        test["valid"],
                        id=f"{name}: {group['description']}: {test['description']}",
                        marks=marks,
                    )
                )
    return cases


CASES = _cases()

pytestmark = pytest.mark.skipif(not CASES, reason=f"JSON-Schema-Test-Suite not found at {SUITE}")


@pytest.mark.parametrize(("schema", "data", "valid"), CASES)
def test_suite_case(schema: Any, data: Any, valid: bool) -> None:
    """A test of the official suite gets the suite's verdict."""
    errors = validate_schema(schema, data)
    assert (errors == []) is valid, errors
