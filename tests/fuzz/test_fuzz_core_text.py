"""Property tests: the JSON helpers and the tool-call parser on arbitrary and hostile text."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from praxo_actors.core import (
    JSONError,
    ToolCallError,
    encode_json,
    extract_json,
    parse_json,
    parse_tool_call,
    parse_tool_calls,
    strip_tool_calls,
)
from praxo_actors.models import ToolCall

FUZZ = settings(
    max_examples=2000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TOOL_CALL_CODES = {
    "TOOL_CALL_INVALID_JSON",
    "TOOL_CALL_INVALID_ARGUMENTS",
    "TOOL_CALL_INVALID_NAME",
    "TOOL_CALL_MALFORMED",
}

# Pieces of the markup the parsers look for, and of the JSON inside it.
FRAGMENTS = [
    "<tool_call",
    "<tool_call>",
    "</tool_call>",
    '<tool_call name="a">',
    "<tool_call name='b' id='7'>",
    ' name="x"',
    "<tool.",
    "<tool.a>",
    "</tool.a>",
    "</tool.b>",
    "<tool.a.b/>",
    "/>",
    ">",
    "<",
    "<think>",
    "</think>",
    "tool.",
    "tool.a",
    "tool.py is broken",
    "\n",
    "\r\n",
    " ",
    "{",
    "}",
    "[",
    "]",
    '"',
    "\\",
    '\\"',
    "\\u00e9",
    "\\ud800",
    ":",
    ",",
    "```",
    "```json\n",
    '"name"',
    '"arguments"',
    '"parameters"',
    '"id"',
    '"a"',
    "{}",
    "[]",
    "null",
    "1e400",
    "-0",
    "😀",
    "\x00",
    "\ufeff",
]

hostile_text = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=40).map("".join)
any_text = st.text(max_size=200) | hostile_text

json_strings = st.text(max_size=8) | st.sampled_from(FRAGMENTS)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | json_strings,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(json_strings, children, max_size=3)
    ),
    max_leaves=12,
)
# Objects for embedding in text: shallow, since generating them dominates the run time.
json_objects = st.dictionaries(
    json_strings,
    st.none()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | json_strings
    | st.lists(json_strings, max_size=2),
    max_size=3,
)

_FIRST = "abcxyzABCXYZ_"
_SEGMENT = st.builds(
    str.__add__, st.sampled_from(_FIRST), st.text(alphabet=_FIRST + "0189-", max_size=6)
)
names = st.lists(_SEGMENT, min_size=1, max_size=3).map(".".join)
ids = st.none() | st.text(alphabet="abc0123_-", min_size=1, max_size=8)
prose = st.text(alphabet="abcdefghijkmnpqrsuvwxyz ABC.,!?0123456789", max_size=30)


def same(a: Any, b: Any) -> bool:
    """Return whether two JSON values are equal, telling ints from floats and -0.0 from 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    return bool(a == b)


@FUZZ
@given(any_text)
def test_parse_json_raises_only_json_invalid(text: str) -> None:
    """parse_json returns a value or raises JSON_INVALID, whatever the text."""
    try:
        parse_json(text)
    except JSONError as exc:
        assert exc.code == "JSON_INVALID"


@FUZZ
@given(any_text)
def test_extract_json_raises_only_not_found(text: str) -> None:
    """extract_json returns a value that re-encodes, or raises JSON_NOT_FOUND."""
    try:
        value = extract_json(text)
    except JSONError as exc:
        assert exc.code == "JSON_NOT_FOUND"
    else:
        assert same(parse_json(encode_json(value)), value)


@FUZZ
@given(any_text)
def test_tool_call_parsers_raise_only_listed_codes(text: str) -> None:
    """parse_tool_calls returns valid calls or raises a listed code; strip never raises."""
    try:
        calls = parse_tool_calls(text)
    except ToolCallError as exc:
        assert exc.code in TOOL_CALL_CODES
        calls = None
    try:
        parse_tool_call(text)
    except ToolCallError as exc:
        assert exc.code in TOOL_CALL_CODES | {"TOOL_CALL_NOT_FOUND"}
    stripped = strip_tool_calls(text)
    assert isinstance(stripped, str)
    assert len(stripped) <= len(text)
    if calls is not None:
        for call in calls:
            assert isinstance(call.arguments, dict)
            assert 0 < len(call.name) <= 64
        if not calls:
            assert stripped == text.strip()


@FUZZ
@given(json_values)
def test_encode_then_parse_round_trips(value: Any) -> None:
    """parse_json(encode_json(v)) equals v, and encoding is canonical (a fixed point)."""
    text = encode_json(value)
    back = parse_json(text)
    assert same(back, value)
    assert encode_json(back) == text
    assert "\n" not in text


@FUZZ
@given(json_objects, prose, prose)
def test_extract_finds_an_object_in_prose(value: dict[str, Any], before: str, after: str) -> None:
    """An object between bracket-free sentences is extracted whole."""
    assert same(extract_json(f"{before} {encode_json(value)} {after}"), value)


@st.composite
def rendered_calls(draw: st.DrawFn) -> tuple[str, list[ToolCall], list[str]]:
    """Draw calls and prose lines, and render the calls in every supported format."""
    calls, lines, texts = [], [], []
    for _ in range(draw(st.integers(1, 3))):
        text = draw(prose)
        texts.append(text)
        lines.append(text)
        name, arguments = draw(names), draw(json_objects)
        style = draw(st.sampled_from(["xml", "hermes", "dotted", "line"]))
        identifier = draw(ids) if style in ("xml", "hermes", "dotted") else None
        body = encode_json(arguments)
        id_attribute = f' id="{identifier}"' if identifier is not None else ""
        if style == "xml":
            lines.append(f'<tool_call name="{name}"{id_attribute}>{body}</tool_call>')
        elif style == "hermes":
            call_object = {"name": name, "arguments": arguments}
            lines.append(f"<tool_call{id_attribute}>{encode_json(call_object)}</tool_call>")
        elif style == "dotted":
            lines.append(f"<tool.{name}{id_attribute}>{body}</tool.{name}>")
        else:
            lines.append(f"  tool.{name} {body}" if arguments else f"tool.{name}")
        calls.append(ToolCall(name=name, arguments=arguments, id=identifier))
    return "\n".join(lines), calls, texts


@FUZZ
@given(rendered_calls())
def test_rendered_calls_parse_back_and_strip_to_the_prose(
    case: tuple[str, list[ToolCall], list[str]],
) -> None:
    """Calls rendered in any format parse back in order, and stripping leaves only the prose."""
    text, expected, texts = case
    calls = parse_tool_calls(text)
    assert [(call.name, call.id) for call in calls] == [(call.name, call.id) for call in expected]
    for call, want in zip(calls, expected, strict=True):
        assert same(call.arguments, want.arguments)
    remaining = [line.strip() for line in strip_tool_calls(text).splitlines() if line.strip()]
    assert remaining == [line.strip() for line in texts if line.strip()]
