"""``@tool``: a Tool from a function — its name, description, schema, conversion and results."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import json
from typing import Annotated, Any, Literal, TypedDict

import msgspec
import pytest
from _helpers import say

from praxo_actors.agent import (
    Interrupt,
    Tool,
    ToolContext,
    ToolError,
    arun_agent,
    call,
    new_agent_options,
    run_agent,
    tool,
)
from praxo_actors.core import validate_schema
from praxo_actors.models import ToolCall, session


class Place(msgspec.Struct):
    city: str
    country: str = "FR"


class Unit(enum.Enum):
    CELSIUS = "c"
    FAHRENHEIT = "f"


@dataclasses.dataclass
class Window:
    start: int
    end: int


class Filters(TypedDict):
    language: str
    safe: bool


@tool
def forecast(
    place: Place,
    days: Annotated[int, msgspec.Meta(ge=1, le=7)] = 1,
    unit: Unit = Unit.CELSIUS,
    *,
    window: Window | None = None,
    filters: Filters | None = None,
    mode: Literal["brief", "full"] = "brief",
    tags: list[str] | None = None,
    scores: dict[str, float] | None = None,
    ratio: float = 1.0,
    exact: bool = False,
) -> str:
    """Forecast the weather.

    Longer prose that the model does not need.

    Args:
        place: Where to look.
        days: How many days ahead,
            one to seven.
        unit (Unit): Celsius or Fahrenheit.

    Returns:
        The forecast.
    """
    return f"{place.city}/{place.country}: {days}d {unit.value} {mode}"


def tool_messages(result: Any) -> list[str]:
    return [m.content for m in result.session.messages if m.role == "tool"]


def test_the_name_and_description_come_from_the_function_and_its_docstring() -> None:
    """The tool is named after the function and described by the docstring's first paragraph."""
    assert isinstance(forecast, Tool)
    assert forecast.name == "forecast"
    assert forecast.description == "Forecast the weather."
    assert forecast.text_results is True and forecast.delivery == "at_least_once"


def test_parameter_descriptions_come_from_the_args_section() -> None:
    """Each documented parameter's description (continuation lines joined) is in the schema."""
    properties = forecast.parameters["properties"]
    assert properties["place"]["description"] == "Where to look."
    assert properties["days"]["description"] == "How many days ahead, one to seven."
    assert properties["unit"]["description"] == "Celsius or Fahrenheit."
    assert "description" not in properties["mode"]


def test_the_schema_follows_the_type_hints() -> None:
    """Types, defaults, constraints and nested types become the JSON Schema msgspec writes."""
    schema = forecast.parameters
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["place"]
    properties = schema["properties"]
    assert properties["days"] == {
        "description": "How many days ahead, one to seven.",
        "type": "integer",
        "minimum": 1,
        "maximum": 7,
        "default": 1,
    }
    assert properties["mode"] == {"enum": ["brief", "full"], "default": "brief"}
    assert properties["ratio"] == {"type": "number", "default": 1.0}
    assert properties["exact"] == {"type": "boolean", "default": False}
    assert properties["tags"]["anyOf"] == [
        {"type": "array", "items": {"type": "string"}},
        {"type": "null"},
    ]
    assert properties["place"]["$ref"] == "#/$defs/Place"
    assert set(schema["$defs"]) == {"Place", "Unit", "Window", "Filters"}
    assert schema["$defs"]["Unit"]["enum"] == ["c", "f"]
    assert "title" not in schema and "$ref" not in schema


VALID = [
    {"place": {"city": "Lyon"}},
    {"place": {"city": "Oslo", "country": "NO"}, "days": 7, "unit": "f", "mode": "full"},
    {"place": {"city": "Rome"}, "window": {"start": 1, "end": 2}, "tags": ["a"], "ratio": 2},
    {"place": {"city": "Kyiv"}, "filters": {"language": "uk", "safe": True}, "scores": {"a": 1.5}},
    {"place": {"city": "Bern"}, "days": 3.0},  # a whole float is an integer (Core rule)
]
INVALID = [
    {},
    {"place": {"city": 5}},
    {"place": {"city": "Lyon"}, "days": 0},
    {"place": {"city": "Lyon"}, "days": 2.5},
    {"place": {"city": "Lyon"}, "unit": "kelvin"},
    {"place": {"city": "Lyon"}, "mode": "long"},
    {"place": {"city": "Lyon"}, "window": {"start": "now", "end": 2}},
    {"place": {"city": "Lyon"}, "filters": {"language": "en"}},
    {"place": {"city": "Lyon"}, "tags": "a"},
    {"place": {"city": "Lyon"}, "exact": 1},
    {"place": {"city": "Lyon"}, "unknown": 1},
]


@pytest.mark.parametrize("arguments", VALID)
def test_the_core_validator_and_the_conversion_accept_the_same_arguments(
    arguments: dict[str, Any],
) -> None:
    """What the schema admits, the handler converts and the function gets called with."""
    assert validate_schema(forecast.parameters, arguments) == []
    assert isinstance(forecast.handler(arguments), str)


@pytest.mark.parametrize("arguments", INVALID)
def test_the_core_validator_and_the_conversion_refuse_the_same_arguments(
    arguments: dict[str, Any],
) -> None:
    """What the schema refuses, the handler refuses too, without calling the function."""
    assert validate_schema(forecast.parameters, arguments) != []
    refused = forecast.handler(arguments)
    assert isinstance(refused, ToolError) and refused.code == "TOOL_CALL_INVALID_ARGUMENTS"


def test_arguments_arrive_as_the_annotated_types() -> None:
    """A Struct, an Enum, a dataclass and a whole float reach the function as their types."""
    got: list[tuple[Any, ...]] = []

    @tool
    def book(place: Place, unit: Unit, window: Window, nights: int) -> str:
        got.append((place, unit, window, nights))
        return "booked"

    arguments = {"place": {"city": "Nice"}, "unit": "f", "window": {"start": 1, "end": 3}}
    assert book.handler({**arguments, "nights": 2.0}) == "booked"
    assert got == [(Place("Nice"), Unit.FAHRENHEIT, Window(1, 3), 2)]
    assert type(got[0][3]) is int


def test_a_refused_conversion_names_the_path() -> None:
    """A conversion error reads ``<path>: <message>``, the path a JSON Pointer."""
    refused = forecast.handler({"place": {"city": 5}})
    assert refused == ToolError(
        "TOOL_CALL_INVALID_ARGUMENTS", "/place/city: Expected `str`, got `int`"
    )
    assert forecast.handler({"place": {"city": "x"}, "unknown": 1}) == ToolError(
        "TOOL_CALL_INVALID_ARGUMENTS", "/: Object contains unknown field `unknown`"
    )


def test_a_returned_str_reaches_the_model_as_that_text(scripted: Any) -> None:
    """``found cats`` is the tool message's content, not the JSON string ``"found cats"``."""

    @tool
    def search(query: str) -> str:
        """Search."""
        return f"found {query}"

    model = scripted(say("", ToolCall("search", {"query": "cats"}, id="1")), say("ok"))
    result = run_agent(new_agent_options(model, tools=[search]), session("s"), "go")
    assert tool_messages(result) == ["found cats"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Place("Lyon"), {"city": "Lyon", "country": "FR"}),
        (Window(1, 2), {"start": 1, "end": 2}),
        ({"b": [1, 2], "a": None}, {"a": None, "b": [1, 2]}),
        ([Unit.CELSIUS, 3, 1.5, True], ["c", 3, 1.5, True]),
        (None, None),
    ],
)
def test_other_results_reach_the_model_as_json(scripted: Any, value: Any, expected: Any) -> None:
    """Structs and dataclasses are JSON objects; other values their JSON."""

    @tool
    def give() -> Any:
        return value

    model = scripted(say("", ToolCall("give", {}, id="1")), say("ok"))
    result = run_agent(new_agent_options(model, tools=[give]), session("s"), "go")
    assert [json.loads(text) for text in tool_messages(result)] == [expected]


def test_a_pydantic_model_result_is_a_json_object(scripted: Any) -> None:
    """A returned pydantic model reaches the model as its JSON object."""
    pydantic = pytest.importorskip("pydantic", reason="pydantic is not installed")

    class Hit(pydantic.BaseModel):
        title: str
        score: float

    @tool
    def best() -> Any:
        return Hit(title="t", score=0.5)

    model = scripted(say("", ToolCall("best", {}, id="1")), say("ok"))
    result = run_agent(new_agent_options(model, tools=[best]), session("s"), "go")
    assert [json.loads(text) for text in tool_messages(result)] == [{"title": "t", "score": 0.5}]


def test_a_tool_error_and_an_interrupt_come_back_as_themselves() -> None:
    """A returned ToolError or Interrupt is not turned into JSON."""

    @tool
    def refuse(kind: str) -> Any:
        return ToolError("NOPE", "no") if kind == "error" else Interrupt({"ask": kind})

    assert refuse.handler({"kind": "error"}) == ToolError("NOPE", "no")
    assert refuse.handler({"kind": "person"}) == Interrupt({"ask": "person"})


def test_a_tool_context_parameter_gets_the_call_context_and_is_not_in_the_schema(
    scripted: Any,
) -> None:
    """A ``ToolContext`` parameter receives the call's context; the schema leaves it out."""
    seen: list[ToolContext | None] = []

    @tool
    def charge(amount: int, context: ToolContext) -> str:
        seen.append(context)
        return "charged"

    assert set(charge.parameters["properties"]) == {"amount"}
    model = scripted(say("", ToolCall("charge", {"amount": 3}, id="c")), say("ok"))
    result = run_agent(new_agent_options(model, tools=[charge]), session("s"), "go")
    assert seen == [ToolContext(result.run_id, "s", "c", f"{result.run_id}:1:0")]
    charge.handler({"amount": 1})
    assert seen[-1] is None  # outside a run there is no call context


def test_an_optional_tool_context_parameter_is_recognised() -> None:
    """``ToolContext | None`` is a context parameter too."""

    @tool
    def look(query: str, context: ToolContext | None = None) -> str:
        return "ok"

    assert list(look.parameters["properties"]) == ["query"]


def test_an_async_function_makes_an_async_tool() -> None:
    """An ``async def`` tool runs under arun_agent, with its context and conversion."""
    seen: list[Any] = []

    @tool
    async def fetch(url: str, retries: int = 1, context: ToolContext | None = None) -> str:
        """Fetch a page."""
        await asyncio.sleep(0)
        seen.append((url, retries, context is not None))
        return f"page {url}"

    def model_reply(request: Any) -> Any:
        if request.step == 1:
            return say("", ToolCall("fetch", {"url": "u", "retries": 2}, id="1"))
        return say("done")

    async def model(request: Any) -> Any:
        return model_reply(request)

    result = asyncio.run(arun_agent(new_agent_options(model, tools=[fetch]), session("s"), "go"))
    assert tool_messages(result) == ["page u"] and seen == [("u", 2, True)]
    refused = asyncio.run(fetch.handler({"url": 1}))
    assert refused.code == "TOOL_CALL_INVALID_ARGUMENTS"


def test_tool_takes_a_name_a_description_and_a_delivery() -> None:
    """``@tool(name=..., description=..., delivery=...)`` overrides what the function gives."""

    @tool(name="fs.read", description="Read a file.", delivery="at_most_once")
    def read_file(path: str) -> str:
        """Something else."""
        return path

    assert (read_file.name, read_file.description) == ("fs.read", "Read a file.")
    assert read_file.delivery == "at_most_once"


def test_a_mutable_default_is_fresh_on_every_call() -> None:
    """A list default is copied per call, so one call's change never reaches the next."""

    @tool
    def collect(items: list[int] = [1, 2]) -> Any:  # noqa: B006 - the case under test
        items.append(3)
        return items

    assert collect.handler({}) == [1, 2, 3]
    assert collect.handler({}) == [1, 2, 3]


def test_a_function_without_hints_or_docstring_takes_any_json() -> None:
    """An unannotated parameter accepts any JSON value; no docstring means no description."""

    @tool
    def echo(value):  # type: ignore[no-untyped-def]
        return {"value": value}

    assert echo.description == "" and echo.parameters["required"] == ["value"]
    assert echo.handler({"value": [1, {"a": None}]}) == {"value": [1, {"a": None}]}


def test_methods_and_callable_objects_become_tools() -> None:
    """A bound method and an object with ``__call__`` are described without ``self``."""

    class Counter:
        def __init__(self) -> None:
            self.total = 0

        def add(self, by: int) -> int:
            """Add to the total."""
            self.total += by
            return self.total

        def __call__(self, by: int) -> int:
            return self.add(by)

    counter = Counter()
    add = tool(counter.add)
    assert add.name == "add" and list(add.parameters["properties"]) == ["by"]
    assert add.handler({"by": 2}) == 2
    named = tool(counter, name="count")
    assert named.handler({"by": 3}) == 5


def test_sphinx_param_fields_describe_parameters_too() -> None:
    """``:param name: text`` fields are read when there is no ``Args:`` section."""

    @tool
    def move(x: int, y: int) -> str:
        """Move the cursor.

        :param x: Column,
            from zero.
        :param int y: Row.
        """
        return "moved"

    properties = move.parameters["properties"]
    assert properties["x"]["description"] == "Column, from zero."
    assert properties["y"]["description"] == "Row."
    assert move.description == "Move the cursor."


def test_call_invokes_the_converting_handler() -> None:
    """``call`` runs a @tool's handler: conversion included, the result as the loop gets it."""
    options = new_agent_options(lambda request: say("x"), tools=[forecast])
    reply = call(options, ToolCall("forecast", {"place": {"city": "Lyon"}, "days": 2}))
    assert reply == "Lyon/FR: 2d c brief"


@pytest.mark.parametrize(
    ("make", "error", "text"),
    [
        (lambda: tool(lambda x: x), ValueError, "is not a tool name"),
        (lambda: tool(name="bad name")(lambda x: x), ValueError, "is not a tool name"),
        (lambda: tool(name="a" * 65)(lambda x: x), ValueError, "longer than 64"),
        (lambda: tool(42), TypeError, "takes a function"),  # type: ignore[call-overload]
    ],
)
def test_bad_names_and_non_functions_are_refused(make: Any, error: type, text: str) -> None:
    """A name that is no tool name, or something that is not callable, fails at once."""
    with pytest.raises(error, match=text):
        make()


def test_parameters_a_model_cannot_give_are_refused() -> None:
    """``*args``, ``**kwargs`` and positional-only parameters fail when the tool is made."""

    def star(*values: int) -> str:
        return ""

    def stars(**values: int) -> str:
        return ""

    def positional(value: int, /) -> str:
        return ""

    for fn in (star, stars, positional):
        with pytest.raises(TypeError, match="must be one a keyword can give"):
            tool(fn)


def test_types_msgspec_cannot_describe_are_refused() -> None:
    """A parameter of a type msgspec has no schema for fails when the tool is made."""

    class Opaque:
        pass

    def use(thing: Opaque) -> str:
        return ""

    with pytest.raises(TypeError, match="tool 'use'"):
        tool(use)


def test_annotations_that_do_not_resolve_are_refused() -> None:
    """A string annotation naming nothing fails with a TypeError naming the tool."""

    def broken(value: NotDefinedAnywhere) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    with pytest.raises(TypeError, match="annotations do not resolve"):
        tool(broken)


def test_string_annotations_may_name_classes_local_to_where_the_tool_is_made() -> None:
    """Under ``from __future__ import annotations`` a local Struct still resolves."""

    class Local(msgspec.Struct):
        size: int

    @tool
    def measure(item: Local) -> str:
        return str(item.size)

    @tool(name="measure_again")
    def measure_again(item: Local) -> str:
        return str(item.size)

    assert measure.handler({"item": {"size": 4}}) == "4"
    assert measure_again.handler({"item": {"size": 5}}) == "5"
