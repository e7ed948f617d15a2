"""structured_output with a type: its schema is checked, and ``structured`` is an instance."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import pickle
from typing import Any, TypedDict

import msgspec
import pytest
from _helpers import say

from praxo_actors.agent import AgentError, arun_agent, new_agent_options, run_agent
from praxo_actors.core import SchemaError, validate_schema
from praxo_actors.middleware import StructuredOutput, apply_structured, structured_output
from praxo_actors.models import session


class City(msgspec.Struct):
    name: str
    population: int
    tags: list[str] = []


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Score(TypedDict):
    team: str
    goals: int


def test_a_struct_type_gives_its_schema_and_an_instance(scripted: Any) -> None:
    """``structured`` is a City; ``output`` the text; the schema is msgspec's, root inlined."""
    so = structured_output(City)
    assert so.output_type is City
    assert so.schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "population": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
        },
        "required": ["name", "population"],
    }
    text = 'Here: {"name": "Oslo", "population": 709000}'
    result = run_agent(
        new_agent_options(scripted(say(text)), structured_output=so), session("s"), "x"
    )
    assert result.structured == City("Oslo", 709000) and result.output == text


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        (Point, '{"x": 1, "y": 2.5}', Point(1.0, 2.5)),
        (Score, '{"team": "A", "goals": 2}', {"team": "A", "goals": 2}),
        (list[City], '[{"name": "Rome", "population": 1}]', [City("Rome", 1)]),
        (City, '{"name": "Bern", "population": 3.0}', City("Bern", 3)),  # whole float: int
    ],
)
def test_dataclasses_typed_dicts_and_generic_types_work_alike(
    kind: Any, text: str, expected: Any
) -> None:
    """Each type's schema is checked and the value converted to it."""
    _, value = apply_structured(structured_output(kind), text)
    assert value == expected and type(value) is type(expected)


def test_a_value_the_schema_refuses_goes_to_the_repairer() -> None:
    """An invalid answer gets the schema's errors, and the repaired one is converted."""
    seen: list[list[SchemaError]] = []

    def repair(text: str, errors: list[SchemaError]) -> str:
        seen.append(errors)
        return '{"name": "Oslo", "population": 1}'

    _, value = apply_structured(structured_output(City, 1, repair), '{"name": "Oslo"}')
    assert value == City("Oslo", 1)
    assert [(e.path, e.keyword) for e in seen[0]] == [("", "required")]


def test_exhausted_repairs_fail_with_agent_structured_output(scripted: Any) -> None:
    """Without a repair that fits the type the run fails with AGENT_STRUCTURED_OUTPUT."""
    options = new_agent_options(
        scripted(say('{"name": 3}')), structured_output=structured_output(City)
    )
    with pytest.raises(AgentError) as failed:
        run_agent(options, session("s"), "x")
    assert failed.value.code == "AGENT_STRUCTURED_OUTPUT"


def test_a_value_the_type_refuses_beyond_the_schema_is_a_convert_error() -> None:
    """A constraint the subset does not check (a date format) is refused with keyword convert."""

    class Dated(msgspec.Struct):
        when: datetime.date

    seen: list[list[SchemaError]] = []

    def repair(text: str, errors: list[SchemaError]) -> str:
        seen.append(errors)
        return '{"when": "2024-05-01"}'

    so = structured_output(Dated, 1, repair)
    assert validate_schema(so.schema, {"when": "not a date"}) == []  # "format" is not checked
    _, value = apply_structured(so, '{"when": "not a date"}')
    assert value == Dated(datetime.date(2024, 5, 1))
    assert [(e.path, e.keyword) for e in seen[0]] == [("/when", "convert")]


def test_a_pydantic_model_is_a_type_too(scripted: Any) -> None:
    """A pydantic model's schema is used; its validators run; ``structured`` is the model."""
    pydantic = pytest.importorskip("pydantic", reason="pydantic is not installed")

    class Person(pydantic.BaseModel):
        name: str
        age: int

        @pydantic.field_validator("age")
        @classmethod
        def adult(cls, age: int) -> int:
            if age < 18:
                raise ValueError("must be an adult")
            return age

    seen: list[list[SchemaError]] = []

    def repair(text: str, errors: list[SchemaError]) -> str:
        seen.append(errors)
        return '{"name": "Ada", "age": 36}'

    so = structured_output(Person, 1, repair)
    assert so.schema == Person.model_json_schema()
    options = new_agent_options(scripted(say('{"name": "Ada", "age": 12}')), structured_output=so)
    result = run_agent(options, session("s"), "x")
    assert result.structured == Person(name="Ada", age=36)
    assert [(e.path, e.keyword) for e in seen[0]] == [("/age", "convert")]
    assert "must be an adult" in seen[0][0].message


def test_async_runs_return_an_instance_too() -> None:
    """Under arun_agent ``structured`` is an instance of the type as well."""

    async def model(request: Any) -> Any:
        return say('{"x": 0, "y": 0}')

    options = new_agent_options(model, structured_output=structured_output(Point))
    assert asyncio.run(arun_agent(options, session("s"), "x")).structured == Point(0.0, 0.0)


def test_schemas_keep_working_as_before() -> None:
    """A dict or bool is a schema; the value stays the parsed JSON."""
    assert structured_output({"type": "array"}) == StructuredOutput({"type": "array"}, 0, None)
    assert apply_structured(structured_output(True), "[1]") == ("[1]", [1])


@pytest.mark.parametrize("value", [None, "a schema as text", object()])
def test_neither_a_schema_nor_a_type_is_refused(value: Any) -> None:
    """None, a string and an object msgspec cannot describe are TypeErrors at once."""
    with pytest.raises(TypeError, match="structured_output takes a JSON Schema"):
        structured_output(value)


def test_settings_pickle_and_keep_their_type() -> None:
    """The settings pickle (for runs shipped to other processes) and check alike afterwards."""
    so = pickle.loads(pickle.dumps(structured_output(City, 2)))
    assert so == structured_output(City, 2)
    assert apply_structured(so, '{"name": "Oslo", "population": 1}')[1] == City("Oslo", 1)


def test_the_01_keyword_schema_still_works() -> None:
    """``structured_output(schema=..., max_repairs=...)``, as 0.1 wrote it, gives the same."""
    schema = {"type": "object", "required": ["a"]}
    old = structured_output(schema=schema, max_repairs=2)
    assert old.schema == schema
    assert old.max_repairs == 2
    assert old == structured_output(schema, 2)
    with pytest.raises(TypeError, match="not both"):
        structured_output(schema, schema=schema)
