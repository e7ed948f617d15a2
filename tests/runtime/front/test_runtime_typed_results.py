"""Typed structured output read back later: ``handle.result(run_id)`` on a new runtime."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from _helpers import say
from _runtime_helpers import TIMEOUT

from praxo_actors.agent import AgentOptions, new_agent_options
from praxo_actors.middleware import structured_output
from praxo_actors.runtime import Runtime

Start = Callable[..., Runtime]


class City(msgspec.Struct):
    name: str
    population: int


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Town(msgspec.Struct):
    """A type that no longer reads what ``City`` wrote (its field is another)."""

    mayor: str


def typed_agent(kind: Any, text: str) -> Callable[[], AgentOptions]:
    def agent() -> AgentOptions:
        return new_agent_options(lambda _request: say(text), structured_output=kind)

    return agent


def run_then_read(runtime: Start, path: Path, kind: Any, text: str, later: Any = None) -> Any:
    """Run once on ``path``; return the structured output of both the run and a new runtime's
    ``handle.result`` of it (the later runtime's agent typed ``later``, or ``kind``)."""
    first = runtime(store=path)
    first.register_agent("default", typed_agent(structured_output(kind), text))
    future = first.session("s").run("go")
    ran = future.get(timeout=TIMEOUT).structured
    first.stop()
    second = runtime(store=path)
    again = structured_output(kind if later is None else later)
    second.register_agent("default", typed_agent(again, text))
    return ran, second.session("s").result(future.run_id, timeout=TIMEOUT).structured


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        (City, '{"name": "Oslo", "population": 7}', City("Oslo", 7)),
        (Point, '{"x": 1, "y": 2.5}', Point(1.0, 2.5)),
    ],
)
def test_a_kept_result_reads_back_as_an_instance_of_the_output_type(
    runtime: Start, tmp_path: Path, kind: Any, text: str, expected: Any
) -> None:
    """Struct and dataclass output comes back from a new runtime's store as that type."""
    ran, kept = run_then_read(runtime, tmp_path / "s.sqlite3", kind, text)
    assert ran == expected
    assert type(kept) is kind and kept == expected


def test_a_kept_pydantic_result_is_stored_and_reads_back_as_the_model(
    runtime: Start, tmp_path: Path
) -> None:
    """A pydantic model is stored as its JSON dump and read back as the model."""
    pydantic = pytest.importorskip("pydantic", reason="pydantic is not installed")

    class Person(pydantic.BaseModel):
        name: str
        born: int

    ran, kept = run_then_read(
        runtime, tmp_path / "s.sqlite3", Person, '{"name": "Ada", "born": 1815}'
    )
    assert ran == Person(name="Ada", born=1815)
    assert type(kept) is Person and kept == ran


def test_a_kept_value_the_type_no_longer_reads_comes_back_as_json(
    runtime: Start, tmp_path: Path
) -> None:
    """When the agent's type changed and refuses the stored value, the JSON value is given."""
    text = '{"name": "Oslo", "population": 7}'
    ran, kept = run_then_read(runtime, tmp_path / "s.sqlite3", City, text, later=Town)
    assert ran == City("Oslo", 7)
    assert kept == {"name": "Oslo", "population": 7}


def test_a_kept_result_of_an_untyped_agent_is_its_json(runtime: Start, tmp_path: Path) -> None:
    """A schema given as a dict keeps giving the JSON value, as the run itself does."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    ran, kept = run_then_read(runtime, tmp_path / "s.sqlite3", schema, '{"n": 3}')
    assert ran == kept == {"n": 3}
