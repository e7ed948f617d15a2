"""Benchmark the Core's schema validator and JSON parser against jsonschema and the stdlib.

Run ``python bench/core.py`` (``--quick`` for a smoke run). It prints, per case, the best-of-N
time per call and the ratios:

1. ``validate_schema`` against ``jsonschema.Draft202012Validator(schema).iter_errors`` with the
   validator built once, outside the timing (the fair comparison; target: at least 3x faster),
   and, for context, ``jsonschema.validate`` per call (which also checks the schema each time);
2. ``parse_json`` against ``json.loads`` on a tool call's arguments, a 50-message chat history
   and a large document (target: no slower);
3. ``parse_tool_calls(text, format=NAME)`` per named format on a ~2 KB output holding two calls
   in that format, next to ``format=None`` on the same text (target: at most 50 µs each).

Both libraries get the same inputs; every validation result is checked to agree before timing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import platform
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
from _machine import cpu_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _formats_render import render

from praxo_actors.core import (
    ToolCallError,
    encode_json,
    parse_json,
    parse_tool_calls,
    tool_call_formats,
    validate_schema,
)

READ_FILE = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096},
        "mode": {"type": "string", "enum": ["r", "rb"]},
        "lines": {"type": "array", "items": {"type": "integer", "minimum": 1}, "maxItems": 100},
        "encoding": {"type": ["string", "null"]},
    },
    "required": ["path"],
    "additionalProperties": False,
}

WEB_SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 512},
        "top_k": {"type": "integer", "minimum": 1, "maximum": 50},
        "safe": {"type": "boolean"},
        "filters": {
            "type": "object",
            "properties": {
                "domains": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^[a-z0-9.-]+$"},
                    "uniqueItems": True,
                },
                "after": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
                "language": {"enum": ["en", "de", "fr", "es", "ja"]},
            },
            "additionalProperties": False,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

# As pydantic v2 generates it for a model with a nested model list, an enum and optionals.
CREATE_EVENT = {
    "$defs": {
        "Role": {"enum": ["required", "optional", "organizer"], "title": "Role", "type": "string"},
        "Attendee": {
            "properties": {
                "email": {"pattern": "^[^@\\s]+@[^@\\s]+$", "title": "Email", "type": "string"},
                "name": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                "role": {"$ref": "#/$defs/Role", "default": "required"},
            },
            "required": ["email"],
            "title": "Attendee",
            "type": "object",
        },
    },
    "properties": {
        "title": {"maxLength": 200, "minLength": 1, "title": "Title", "type": "string"},
        "start": {"title": "Start", "type": "string"},
        "duration_minutes": {"exclusiveMinimum": 0, "multipleOf": 5, "type": "integer"},
        "attendees": {"items": {"$ref": "#/$defs/Attendee"}, "type": "array", "maxItems": 50},
        "location": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    },
    "required": ["title", "start", "duration_minutes"],
    "title": "CreateEvent",
    "type": "object",
}

EDIT_FILE = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "edits": {
            "type": "array",
            "minItems": 1,
            "maxItems": 50,
            "items": {
                "type": "object",
                "properties": {
                    "old": {"type": "string"},
                    "new": {"type": "string"},
                    "count": {"type": "integer", "minimum": 1},
                },
                "required": ["old", "new"],
                "additionalProperties": False,
            },
        },
        "dry_run": {"type": "boolean"},
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
}

ATTENDEES = [
    {"email": f"user{i}@example.com", "name": f"User {i}", "role": "optional"} for i in range(6)
]

SCHEMA_CASES: list[tuple[str, dict[str, Any], Any]] = [
    ("read_file valid", READ_FILE, {"path": "src/app.py", "mode": "r", "lines": [1, 2, 3, 40]}),
    ("read_file invalid", READ_FILE, {"path": "", "mode": "w", "lines": [0, "2"], "x": 1}),
    (
        "web_search valid",
        WEB_SEARCH,
        {
            "query": "actor supervision",
            "top_k": 10,
            "filters": {"domains": ["erlang.org", "hexdocs.pm"], "after": "2024-01-01"},
        },
    ),
    (
        "web_search invalid",
        WEB_SEARCH,
        {"query": "x", "top_k": 0, "filters": {"domains": ["a", "a"], "after": "yesterday"}},
    ),
    (
        "create_event valid",
        CREATE_EVENT,
        {
            "title": "Planning",
            "start": "2025-03-01T10:00",
            "duration_minutes": 45,
            "attendees": ATTENDEES,
        },
    ),
    (
        "create_event invalid",
        CREATE_EVENT,
        {
            "title": "Planning",
            "duration_minutes": 7,
            "attendees": [*ATTENDEES[:4], {"email": "nobody", "role": "boss"}],
        },
    ),
    (
        "edit_file valid",
        EDIT_FILE,
        {
            "path": "README.md",
            "edits": [{"old": f"v0.{i}", "new": f"v1.{i}", "count": 1} for i in range(8)],
        },
    ),
    (
        "edit_file invalid",
        EDIT_FILE,
        {"path": "README.md", "edits": [{"old": "a"}, {"old": "b", "new": 2, "count": 0}]},
    ),
]


def _chat_history() -> str:
    """Return a 50-message chat history with tool calls, as a model API would send it."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful agent."}]
    for i in range(49):
        if i % 3 == 0:
            messages.append({"role": "user", "content": f"Step {i}: please look at file {i}. " * 4})
        elif i % 3 == 1:
            call = {"name": "read_file", "arguments": {"path": f"src/m{i}.py", "lines": [1, 2]}}
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        else:
            text = "def f(x):\n    return x * 2\n" * 8
            messages.append({"role": "tool", "content": text, "tool_call_id": f"c{i}"})
    return encode_json({"messages": messages, "model": "local", "temperature": 0.2})


def _large_document() -> str:
    """Return a document of about 1 MB: records with nested objects, numbers and text."""
    records = [
        {
            "id": i,
            "name": f"record-{i}",
            "score": i * 0.37,
            "tags": ["alpha", "beta", "gamma"][: i % 3 + 1],
            "active": i % 2 == 0,
            "owner": {"id": i % 97, "email": f"owner{i % 97}@example.com"},
            "notes": None if i % 5 else "checked \u2713 by the nightly job",
        }
        for i in range(5000)
    ]
    return encode_json({"records": records, "count": len(records)})


JSON_CASES = [
    ("tool-call arguments", encode_json(SCHEMA_CASES[4][2])),
    ("chat history (50 messages)", _chat_history()),
    ("large document", _large_document()),
]


def best_per_call(
    func: Callable[..., Any], args: tuple[Any, ...], repeats: int, budget: float
) -> float:
    """Return the best µs per ``func(*args)`` over ``repeats`` runs of about ``budget`` s each."""

    def call() -> None:
        func(*args)

    number = 1
    while True:
        elapsed = timeit.timeit(call, number=number)
        if elapsed >= budget / 5 or number >= 1 << 20:
            break
        number *= 2
    number = max(1, int(number * budget / max(elapsed, 1e-9)))
    return min(timeit.repeat(call, number=number, repeat=repeats)) / number * 1e6


def _jsonschema_validate(schema: dict[str, Any], value: Any) -> None:
    with contextlib.suppress(jsonschema.ValidationError):
        jsonschema.validate(value, schema, cls=jsonschema.Draft202012Validator)


def _iter_errors(validator: Any, value: Any) -> list[Any]:
    return list(validator.iter_errors(value))


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def bench_schema(repeats: int, budget: float) -> list[float]:
    """Print the schema table; return our speed-up over the prebuilt validator per case."""
    print(
        f"{'validate_schema':<22}{'ours µs':>10}{'Draft2020 µs':>14}{'ratio':>8}"
        f"{'validate() µs':>15}{'ratio':>8}"
    )
    ratios = []
    for name, schema, value in SCHEMA_CASES:
        validator = jsonschema.Draft202012Validator(schema)
        ours_valid = validate_schema(schema, value) == []
        labelled_valid = name.endswith(" valid")
        if ours_valid is not validator.is_valid(value) or ours_valid is not labelled_valid:
            raise SystemExit(f"{name}: the validators disagree or the case is mislabelled")
        ours = best_per_call(validate_schema, (schema, value), repeats, budget)
        theirs = best_per_call(_iter_errors, (validator, value), repeats, budget)
        per_call = best_per_call(_jsonschema_validate, (schema, value), repeats, budget)
        ratios.append(theirs / ours)
        print(
            f"{name:<22}{ours:>10.2f}{theirs:>14.2f}{theirs / ours:>7.1f}x"
            f"{per_call:>15.1f}{per_call / ours:>7.0f}x"
        )
    return ratios


def bench_json(repeats: int, budget: float) -> list[float]:
    """Print the JSON table; return json.loads time over parse_json time per payload."""
    print(f"{'parse_json':<28}{'bytes':>10}{'ours µs':>12}{'json.loads µs':>15}{'ratio':>8}")
    ratios = []
    for name, text in JSON_CASES:
        if parse_json(text) != json.loads(text):
            raise SystemExit(f"{name}: the parsers disagree")
        ours = best_per_call(parse_json, (text,), repeats, budget)
        theirs = best_per_call(json.loads, (text,), repeats, budget)
        ratios.append(theirs / ours)
        size = len(text.encode())
        print(f"{name:<28}{size:>10}{ours:>12.2f}{theirs:>15.2f}{theirs / ours:>7.2f}x")
    return ratios


FORMAT_TARGET_US = 50.0

_PROSE = (
    "Looking at the repository layout, the failing test reads the configuration before the "
    "fixture writes it, so the order of the two steps matters here. "
)
_CALLS = [
    ("read_file", {"path": "src/praxo/config.py", "lines": [1, 80], "encoding": "utf-8"}),
    (
        "search_code",
        {"query": "def load_config", "filters": {"language": "python", "max_results": 20}},
    ),
]


def format_output(fmt: str) -> str:
    """Return a ~2 KB model output: reasoning-free prose, then two calls in ``fmt``."""
    calls, _ = render(fmt, _CALLS)
    return _PROSE * 12 + "\n\n" + calls


def _default_parse(text: str) -> None:
    with contextlib.suppress(ToolCallError):  # the default set may refuse a family's markup
        parse_tool_calls(text)


def bench_formats(repeats: int, budget: float) -> list[float]:
    """Print µs per parse for each named format and for format=None; return the named times."""
    print(
        f"{'parse_tool_calls format=':<26}{'bytes':>7}{'named µs':>10}{'None µs':>10}{'ratio':>8}"
    )
    times = []
    for fmt in tool_call_formats():
        text = format_output(fmt)
        if len(parse_tool_calls(text, format=fmt)) != len(_CALLS):
            raise SystemExit(f"{fmt}: the benchmark text does not hold two calls")
        named = best_per_call(
            lambda t, f=fmt: parse_tool_calls(t, format=f), (text,), repeats, budget
        )
        default = best_per_call(_default_parse, (text,), repeats, budget)
        times.append(named)
        size = len(text.encode())
        print(f"{fmt:<26}{size:>7}{named:>10.2f}{default:>10.2f}{named / default:>7.2f}x")
    return times


def main(argv: list[str] | None = None) -> int:
    """Run both benchmarks and print the tables and a verdict per target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few, short repeats (smoke run)")
    args = parser.parse_args(argv)
    repeats, budget = (2, 0.01) if args.quick else (7, 0.2)
    print(f"Python {platform.python_version()} ({platform.python_implementation()})")
    print(f"CPU    {cpu_model()} ({platform.machine()})")
    print(f"jsonschema {_version('jsonschema')}, msgspec {_version('msgspec')}")
    print(
        f"best of {repeats} repeats of ~{budget:g} s each; ratio = other / ours (>1: ours faster)"
    )
    print()
    schema_ratios = bench_schema(repeats, budget)
    print()
    json_ratios = bench_json(repeats, budget)
    print()
    format_times = bench_formats(repeats, budget)
    print()
    slowest, mean = min(schema_ratios), _geomean(schema_ratios)
    verdict = "met" if slowest >= 3 else "NOT met"
    print(f"validate_schema vs Draft202012Validator: min {slowest:.1f}x, geomean {mean:.1f}x")
    print(f"  target >= 3x: {verdict}")
    slowest = min(json_ratios)
    verdict = "met" if slowest >= 1 else "NOT met"
    print(f"parse_json vs json.loads: min {slowest:.2f}x, geomean {_geomean(json_ratios):.2f}x")
    print(f"  target >= 1x: {verdict}")
    slowest_format = max(format_times)
    verdict = "met" if slowest_format <= FORMAT_TARGET_US else "NOT met"
    print(f"parse_tool_calls per named format: max {slowest_format:.1f} µs")
    print(f"  target <= {FORMAT_TARGET_US:g} µs: {verdict}")
    return 0


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    sys.exit(main())
