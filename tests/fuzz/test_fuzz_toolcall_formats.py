"""Properties of every named tool-call format, drawn by Hypothesis.

Per format: a rendered call parses back to itself; stripping removes every call and keeps the
prose; hostile text returns calls or raises a coded ``ToolCallError``, and stripping it never
raises. ``PRAXO_FUZZ_EXAMPLES`` sets the examples per property and format (the suite draws
a few dozen; ``PRAXO_FUZZ_EXAMPLES=10000`` is the long run).
"""

from __future__ import annotations

import keyword
import os
from typing import Any

import pytest
from _formats_render import render
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from praxo_actors.core import ToolCallError, parse_tool_calls, strip_tool_calls, tool_call_formats

EXAMPLES = int(os.environ.get("PRAXO_FUZZ_EXAMPLES", "15" if os.environ.get("CI") else "40"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
CODES = {
    "TOOL_CALL_INVALID_JSON",
    "TOOL_CALL_INVALID_ARGUMENTS",
    "TOOL_CALL_INVALID_NAME",
    "TOOL_CALL_MALFORMED",
}
FORMATS = tool_call_formats()

identifiers = st.from_regex(r"[a-z_][a-z0-9_]{0,11}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s) and s not in {"true", "false", "null"}
)
text_values = st.text(st.characters(exclude_categories=("Cs",)), max_size=20).filter(
    lambda s: "<escape>" not in s
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text_values
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(identifiers, inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(identifiers, values, max_size=4)
calls = st.lists(st.tuples(identifiers, arguments), min_size=1, max_size=3)
prose = st.text(
    st.sampled_from("abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789.,!?'-:;éü€"), max_size=40
)

FRAGMENTS = [
    *("<think>", "</think>", "{", "}", "[", "]", '"', "\\", "'", ",", ":", ";", "\n", " ", "("),
    *(")", "=", "<", ">", "/", "```", "```json\n", "null", "1e400", "\ud800", "\x00", "é", "😀"),
    *('{"name": ', '"arguments": ', "<tool_call>", "</tool_call>", "[TOOL_CALLS]", "<escape>"),
]  # fmt: skip


@pytest.mark.parametrize("fmt", FORMATS)
@PROPERTY
@given(drawn=calls)
def test_a_rendered_call_parses_back_to_itself(fmt: str, drawn: list[Any]) -> None:
    """Calls written as the family's template writes them parse back to the same calls."""
    text, expected = render(fmt, drawn)
    assert parse_tool_calls(text, format=fmt) == expected


@pytest.mark.parametrize("fmt", FORMATS)
@PROPERTY
@given(drawn=calls, before=prose, after=prose)
def test_stripped_text_holds_no_calls_and_keeps_the_prose(
    fmt: str, drawn: list[Any], before: str, after: str
) -> None:
    """Parse finds the calls among prose; the stripped text has none and keeps the prose."""
    rendered, expected = render(fmt, drawn)
    text = f"{before}\n{rendered}\n{after}"
    assert parse_tool_calls(text, format=fmt) == expected
    stripped = strip_tool_calls(text, format=fmt)
    assert parse_tool_calls(stripped, format=fmt) == []
    assert before.strip() in stripped and after.strip() in stripped


@pytest.mark.parametrize("fmt", [*FORMATS, "auto"])
@PROPERTY
@given(data=st.data())
def test_hostile_text_returns_or_raises_a_coded_error(fmt: str, data: st.DataObject) -> None:
    """Pieces of real markup mixed with hostile fragments never raise anything but a code."""
    rendered, _ = render(
        fmt if fmt != "auto" else data.draw(st.sampled_from(FORMATS)),
        [("get_weather", {"city": "Paris", "n": [1, {"a": None}]})],
    )
    piece = st.tuples(st.integers(0, len(rendered)), st.integers(0, 40)).map(
        lambda span: rendered[span[0] : span[0] + span[1]]
    )
    text = "".join(data.draw(st.lists(piece | st.sampled_from(FRAGMENTS), max_size=30)))
    try:
        found = parse_tool_calls(text, format=fmt)
    except ToolCallError as exc:
        assert exc.code in CODES, exc.code
    else:
        assert isinstance(found, list)
    assert isinstance(strip_tool_calls(text, format=fmt), str)


HOSTILE = [
    "{" * 60_000,
    '{"name": ' * 20_000,
    '{"name": "' * 20_000,
    "[" * 60_000,
    "[f(" * 20_000,
    "\n[f(a=" * 20_000,
    "<tool_call>" * 20_000,
    "<tool_calls>[" * 10_000,
    "[TOOL_CALLS]a" * 10_000,
    "[TOOL_CALLS][" * 10_000,
    "<|channel|>" * 20_000,
    "<|start|>assistant<|channel|>commentary to=functions.f<|message|>{" * 3_000,
    "<start_function_call>call:f{a:" * 5_000,
    "<start_function_call>call:f" + "{a:[" * 5_000,
    "<function=f>" * 20_000,
    "<|python_tag|>" + "b.call(" * 20_000,
    "<think>" * 20_000 + "</think>" * 20_000,
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>" * 5_000,
    '"' + "\\" * 60_001,
]


@pytest.mark.parametrize("fmt", [*FORMATS, "auto"])
def test_long_hostile_inputs_finish_with_calls_or_a_code(fmt: str) -> None:
    """Inputs of 20-300 K characters made to defeat a naive scanner end with calls or a code."""
    for text in HOSTILE:
        try:
            parse_tool_calls(text, format=fmt)
        except ToolCallError as exc:
            assert exc.code in CODES, exc.code
        assert isinstance(strip_tool_calls(text, format=fmt), str)
