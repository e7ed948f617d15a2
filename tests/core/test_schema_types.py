"""JSON Schemas from types and conversions back: the helpers ``@tool`` and typed output share."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, TypedDict

import jsonschema
import msgspec
import pytest

from praxo_actors.core import SchemaError, validate_schema
from praxo_actors.core._schema_types import (
    conversion_errors,
    inline_root,
    is_pydantic_model,
    type_converter,
    type_schema,
)


class Leaf(msgspec.Struct):
    name: str


class Tree(msgspec.Struct):
    leaves: list[Leaf]
    by_name: dict[str, Leaf] = {}
    parent: Tree | None = None


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Box:
    width: Annotated[int, msgspec.Meta(ge=0)]


class Row(TypedDict):
    key: str


TYPES: list[Any] = [
    Tree,
    Box,
    Row,
    list[Leaf],
    dict[str, Box],
    Literal["a", "b"],
    Colour,
    int | None,
    Annotated[str, msgspec.Meta(min_length=1, pattern="^[a-z]+$")],
]


@pytest.mark.parametrize("kind", TYPES, ids=repr)
def test_each_schema_is_valid_json_schema_in_the_core_subset(kind: Any) -> None:
    """The schema meets the 2020-12 metaschema, and its references resolve in the Core."""
    schema = type_schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    # Every check the Core makes on a value of the type reports no schema fault.
    faults = {"schema", "$ref", "pattern"}
    assert not [e for e in validate_schema(schema, None) if e.keyword in faults]


def test_a_struct_root_is_written_out_and_its_references_kept() -> None:
    """The root is Tree's definition itself; Leaf and Tree (recursive) stay in ``$defs``."""
    schema = type_schema(Tree)
    assert schema["type"] == "object" and "title" not in schema
    assert set(schema["$defs"]) == {"Leaf", "Tree"}
    assert schema["properties"]["leaves"]["items"] == {"$ref": "#/$defs/Leaf"}
    value = {"leaves": [{"name": "a"}], "parent": {"leaves": []}}
    assert validate_schema(schema, value) == []
    assert [e.path for e in validate_schema(schema, {"leaves": [{}], "parent": {}})] == [
        "/leaves/0",
        "/parent",
    ]


def test_inline_root_leaves_other_schemas_alone() -> None:
    """A schema whose root is not a ``$ref`` into ``$defs`` comes back as it is."""
    for schema in ({"type": "integer"}, {"$ref": "#/definitions/X"}, {"$ref": "#/$defs/X"}):
        assert inline_root(schema) is schema


def test_a_converter_gives_the_type_and_reports_where_it_refuses() -> None:
    """Values convert to instances; a refusal names its path as a JSON Pointer."""
    convert = type_converter(Tree)
    assert convert({"leaves": [{"name": "a"}]}) == Tree([Leaf("a")])
    with pytest.raises(msgspec.ValidationError) as refused:
        convert({"leaves": [{"name": "a"}, {"name": 2}]})
    assert conversion_errors(refused.value) == [
        SchemaError("/leaves/1/name", "convert", "Expected `str`, got `int`")
    ]
    with pytest.raises(msgspec.ValidationError) as refused:
        convert({"leaves": [], "by_name": {"k": {"name": 1}}})
    assert conversion_errors(refused.value)[0].path == "/by_name/*/name"
    with pytest.raises(msgspec.ValidationError) as refused:
        convert({})
    assert conversion_errors(refused.value) == [
        SchemaError("", "convert", "Object missing required field `leaves`")
    ]


def test_pydantic_errors_are_located_too() -> None:
    """A pydantic model is recognised, converted, and its errors keep their locations."""
    pydantic = pytest.importorskip("pydantic", reason="pydantic is not installed")

    class Inner(pydantic.BaseModel):
        size: int

    class Outer(pydantic.BaseModel):
        items: list[Inner]

    assert is_pydantic_model(Outer) and not is_pydantic_model(Tree)
    assert type_schema(Outer) == Outer.model_json_schema()
    with pytest.raises(ValueError) as refused:
        type_converter(Outer)({"items": [{"size": "big"}]})
    [error] = conversion_errors(refused.value)
    assert (error.path, error.keyword) == ("/items/0/size", "convert")


def test_types_msgspec_cannot_describe_raise_type_error() -> None:
    """An arbitrary class has no schema."""
    with pytest.raises(TypeError):
        type_schema(object)
