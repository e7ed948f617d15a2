"""A run's result between a host and the cluster's client: typed output crosses as its type."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
import pytest

from praxo_actors.cluster._results import pack_result, typed_output
from praxo_actors.models import RunResult, Session


class City(msgspec.Struct):
    name: str
    population: int


@dataclasses.dataclass
class Point:
    x: float
    y: float


def crossed(structured: Any) -> RunResult:
    """The result the client reads for a host's result holding ``structured``."""
    result = RunResult(run_id="r", session=Session("s"), output="o", structured=structured)
    reply = pack_result(result)
    decoded = msgspec.msgpack.decode(reply[1], type=RunResult)
    return typed_output(decoded, reply)


@pytest.mark.parametrize("value", [City("Oslo", 7), Point(1.0, 2.5), {"n": 3}, None])
def test_structured_output_crosses_as_its_own_type(value: Any) -> None:
    """Struct, dataclass and JSON output reach the client as they left the host."""
    result = crossed(value)
    assert type(result.structured) is type(value) and result.structured == value
    assert result.output == "o" and result.run_id == "r"


def test_pydantic_output_crosses_as_the_model() -> None:
    """A pydantic model, which msgpack cannot write, reaches the client as the model."""
    pytest.importorskip("pydantic", reason="pydantic is not installed")
    from _pydantic_types import Person

    result = crossed(Person(name="Ada"))
    assert type(result.structured) is Person and result.structured == Person(name="Ada")


def test_output_whose_type_does_not_pickle_crosses_as_json() -> None:
    """A type defined in a function cannot be pickled: the client gets its JSON value."""

    class Local(msgspec.Struct):
        name: str

    assert crossed(Local("x")).structured == {"name": "x"}


def test_output_that_is_not_json_is_refused_with_a_type_error() -> None:
    """A value msgspec cannot write fails the host's reply (it becomes the run's error)."""
    with pytest.raises(TypeError):
        pack_result(RunResult(run_id="r", session=Session("s"), output="", structured=object()))
