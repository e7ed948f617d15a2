"""The memory tools remember, recall and search in one namespace, and report mistakes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from praxo_actors.agent import Tool, ToolError
from praxo_actors.memory import InMemoryStore, MemoryStoreError, memory_tools


@pytest.fixture
def tools(memory_store: InMemoryStore) -> dict[str, Tool]:
    """The memory tools over an empty store, by name."""
    return {tool.name: tool for tool in memory_tools(memory_store, ("users", "ada"))}


def test_the_tools_are_remember_recall_and_search(memory_store: InMemoryStore) -> None:
    """Three tools come back in a fixed order, each with an object schema."""
    found = memory_tools(memory_store, ["users", "ada"])
    assert [tool.name for tool in found] == ["remember", "recall", "search"]
    assert all(tool.parameters["type"] == "object" for tool in found)
    assert [tool.parameters["required"] for tool in found] == [["key", "value"], ["key"], ["query"]]


def test_a_bad_namespace_is_refused_when_building_the_tools(memory_store: InMemoryStore) -> None:
    """The namespace is checked once, up front."""
    with pytest.raises(MemoryStoreError) as info:
        memory_tools(memory_store, ())
    assert info.value.code == "MEMORY_INVALID_NAMESPACE"


def test_remember_stores_an_object_in_the_namespace(
    tools: dict[str, Tool], memory_store: InMemoryStore
) -> None:
    """``remember`` puts an object value under the tools' namespace."""
    assert tools["remember"].handler({"key": "pet", "value": {"kind": "cat"}}) == {
        "key": "pet",
        "stored": True,
    }
    item = memory_store.get(("users", "ada"), "pet")
    assert item is not None
    assert item.value == {"kind": "cat"}


def test_remember_wraps_a_string_value(tools: dict[str, Tool], memory_store: InMemoryStore) -> None:
    """A string value is stored as ``{"text": value}``."""
    tools["remember"].handler({"key": "note", "value": "likes tea"})
    item = memory_store.get(("users", "ada"), "note")
    assert item is not None
    assert item.value == {"text": "likes tea"}


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"value": "x"}, "MEMORY_INVALID_KEY"),
        ({"key": "", "value": "x"}, "MEMORY_INVALID_KEY"),
        ({"key": 3, "value": "x"}, "MEMORY_INVALID_KEY"),
        ({"key": "k"}, "MEMORY_INVALID_VALUE"),
        ({"key": "k", "value": [1]}, "MEMORY_INVALID_VALUE"),
        ({"key": "k", "value": 2}, "MEMORY_INVALID_VALUE"),
        ({"key": "k", "value": {"x": float("nan")}}, "MEMORY_INVALID_VALUE"),
    ],
)
def test_remember_returns_tool_errors_for_bad_arguments(
    tools: dict[str, Tool], args: dict[str, Any], code: str
) -> None:
    """A bad key or value comes back as a ToolError with the store's code."""
    result = tools["remember"].handler(args)
    assert isinstance(result, ToolError)
    assert result.code == code


def test_recall_returns_the_remembered_value(tools: dict[str, Tool]) -> None:
    """``recall`` returns the key and its stored value."""
    tools["remember"].handler({"key": "pet", "value": {"kind": "cat"}})
    assert tools["recall"].handler({"key": "pet"}) == {"key": "pet", "value": {"kind": "cat"}}


def test_recall_of_an_unknown_key_is_a_not_found_tool_error(tools: dict[str, Tool]) -> None:
    """A missing key is an expected failure: ToolError MEMORY_NOT_FOUND naming the key."""
    result = tools["recall"].handler({"key": "nothing"})
    assert isinstance(result, ToolError)
    assert result.code == "MEMORY_NOT_FOUND"
    assert "nothing" in result.message


def test_recall_of_an_invalid_key_is_a_tool_error(tools: dict[str, Tool]) -> None:
    """A missing or empty key is MEMORY_INVALID_KEY."""
    for args in ({}, {"key": ""}):
        result = tools["recall"].handler(args)
        assert isinstance(result, ToolError)
        assert result.code == "MEMORY_INVALID_KEY"


def test_the_tools_do_not_reach_other_namespaces(
    tools: dict[str, Tool], memory_store: InMemoryStore
) -> None:
    """Items elsewhere, even below the tools' namespace, are neither recalled nor found."""
    memory_store.put(("users", "bob"), "pet", {"kind": "dog"})
    memory_store.put(("users", "ada", "private"), "pet", {"kind": "dog"})
    assert isinstance(tools["recall"].handler({"key": "pet"}), ToolError)
    assert tools["search"].handler({"query": "dog"}) == {"results": []}


def test_search_finds_values_by_text_in_key_order(tools: dict[str, Tool]) -> None:
    """``search`` matches text case-insensitively and returns keys with values."""
    for key, text in [("b", "Green TEA"), ("a", "black tea"), ("c", "coffee")]:
        tools["remember"].handler({"key": key, "value": text})
    assert tools["search"].handler({"query": "tea"}) == {
        "results": [
            {"key": "a", "value": {"text": "black tea"}},
            {"key": "b", "value": {"text": "Green TEA"}},
        ]
    }
    assert len(tools["search"].handler({"query": "", "limit": 2})["results"]) == 2


def test_search_fills_its_limit_past_items_of_nested_namespaces(
    tools: dict[str, Tool], memory_store: InMemoryStore
) -> None:
    """Items below the namespace do not use up the limit of a search."""
    for i in range(4):
        memory_store.put(("users", "ada", "x"), f"n{i}", {"text": "tea"})
    for i in range(3):
        tools["remember"].handler({"key": f"k{i}", "value": "tea"})
    found = tools["search"].handler({"query": "tea", "limit": 3})["results"]
    assert [entry["key"] for entry in found] == ["k0", "k1", "k2"]


def test_search_accepts_an_integral_float_limit(tools: dict[str, Tool]) -> None:
    """A limit of 2.0, which the tool's integer schema admits, works like 2."""
    for i in range(3):
        tools["remember"].handler({"key": f"k{i}", "value": "tea"})
    found = tools["search"].handler({"query": "tea", "limit": 2.0})["results"]
    assert [entry["key"] for entry in found] == ["k0", "k1"]


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"query": 1},
        {"query": "x", "limit": 0},
        {"query": "x", "limit": 21},
        {"query": "x", "limit": True},
        {"query": "x", "limit": "3"},
    ],
)
def test_search_returns_tool_errors_for_bad_arguments(
    tools: dict[str, Tool], args: dict[str, Any]
) -> None:
    """A missing query or an out-of-range limit is MEMORY_INVALID_ARGUMENTS."""
    result = tools["search"].handler(args)
    assert isinstance(result, ToolError)
    assert result.code == "MEMORY_INVALID_ARGUMENTS"


def test_the_tools_work_inside_an_agent_run(memory_store: InMemoryStore) -> None:
    """A model remembers, then recalls, through the loop; a miss comes back as error JSON."""
    from praxo_actors.agent import new_agent_options, run_agent
    from praxo_actors.models import ToolCall, session
    from praxo_actors.testing import ScriptedModel

    model = ScriptedModel(
        [
            ToolCall("remember", {"key": "pet", "value": "a cat"}, id="1"),
            [ToolCall("recall", {"key": "pet"}, id="2"), ToolCall("recall", {"key": "x"}, id="3")],
            "Your pet is a cat.",
        ]
    )
    options = new_agent_options(model, tools=memory_tools(memory_store, ("u",)))
    result = run_agent(options, session("s"), "remember my cat")
    tool_messages = [m for m in result.session.messages if m.role == "tool"]
    assert [json.loads(str(m.content)) for m in tool_messages] == [
        {"key": "pet", "stored": True},
        {"key": "pet", "value": {"text": "a cat"}},
        {"error": {"code": "MEMORY_NOT_FOUND", "message": "nothing is remembered under 'x'"}},
    ]
    assert result.output == "Your pet is a cat."
