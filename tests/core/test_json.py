"""Tests for parse_json, encode_json and extract_json."""

from __future__ import annotations

import enum
import math
import sys
from collections import OrderedDict
from typing import Any

import pytest
from _hostile import JSON_TEXTS

from praxo_actors.core import JSONError, encode_json, extract_json, parse_json
from praxo_actors.core._json import MAX_DEPTH, MAX_ITEMS


def _code(call: Any, *args: Any) -> str:
    with pytest.raises(JSONError) as info:
        call(*args)
    return info.value.code


# parse_json ----------------------------------------------------------------------------------


def test_parse_returns_python_values() -> None:
    """parse_json maps JSON onto None, bool, int, float, str, list and dict."""
    value = parse_json('{"n": null, "t": true, "i": 1, "f": 1.5, "s": "x", "l": [], "o": {}}')
    assert value == {"n": None, "t": True, "i": 1, "f": 1.5, "s": "x", "l": [], "o": {}}
    assert type(value["i"]) is int
    assert type(value["f"]) is float


def test_parse_keeps_integer_and_float_apart() -> None:
    """An integer literal stays an int and a literal with a point stays a float."""
    assert type(parse_json("2")) is int
    assert type(parse_json("2.0")) is float
    assert type(parse_json("2e0")) is float


def test_parse_accepts_surrounding_whitespace() -> None:
    """RFC 8259 whitespace may surround the value."""
    assert parse_json(" \t\r\n[1]\n ") == [1]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "[1] x",
        "[1][2]",
        "[1,]",
        '{"a":1,}',
        "{'a': 1}",
        "{a: 1}",
        "[1] // comment",
        "/* c */ [1]",
        "NaN",
        "Infinity",
        "-Infinity",
        "01",
        "+1",
        ".5",
        "1.",
        "0x1F",
        '"\\x41"',
        '"tab\there"',
        '"unterminated',
        "True",
        "None",
        "\ufeff[]",
    ],
)
def test_parse_rejects_invalid_text(text: str) -> None:
    """Anything but exactly one RFC 8259 value raises JSON_INVALID."""
    assert _code(parse_json, text) == "JSON_INVALID"


@pytest.mark.parametrize("value", [b"[]", bytearray(b"[]"), 5, None, ["[]"]])
def test_parse_rejects_non_str_input(value: Any) -> None:
    """Bytes and other non-str inputs raise JSON_INVALID, not TypeError."""
    assert _code(parse_json, value) == "JSON_INVALID"


def test_parse_takes_the_last_duplicate_key() -> None:
    """A repeated key keeps its last value."""
    assert parse_json('{"a": 1, "b": 0, "a": 2}') == {"a": 2, "b": 0}


def test_parse_decodes_unicode_escapes_and_pairs() -> None:
    """BMP escapes and surrogate pairs decode to the characters they name."""
    assert parse_json('"\\u00e9\\ud83d\\ude00"') == "é😀"


@pytest.mark.parametrize("text", ['"\\ud800"', '"\\udc00"', '"\\ud800\\u0041"', '"\\ude00\\ud83d"'])
def test_parse_rejects_lone_surrogate_escapes(text: str) -> None:
    """An escaped surrogate that is not part of a pair raises JSON_INVALID."""
    assert _code(parse_json, text) == "JSON_INVALID"


def test_parse_rejects_raw_lone_surrogate() -> None:
    """A lone surrogate in the str itself raises JSON_INVALID, not UnicodeEncodeError."""
    assert _code(parse_json, '"\ud800"') == "JSON_INVALID"


def test_parse_keeps_every_digit_of_big_integers() -> None:
    """Integers beyond 64 bits are exact."""
    assert parse_json("-123456789012345678901234567890") == -123456789012345678901234567890


def test_parse_limits_integer_length() -> None:
    """Integers up to 4,300 characters parse; longer ones raise JSON_INVALID."""
    assert parse_json("9" * 4300) == int("9" * 4300)
    assert _code(parse_json, "9" * 4301) == "JSON_INVALID"
    assert _code(parse_json, "-" + "9" * 4300) == "JSON_INVALID"


def test_parse_rejects_float_overflow_and_flushes_underflow() -> None:
    """1e400 raises JSON_INVALID while 1e-400 parses as 0.0."""
    assert _code(parse_json, "1e400") == "JSON_INVALID"
    assert _code(parse_json, "-1e400") == "JSON_INVALID"
    assert parse_json("1e-400") == 0.0


def test_parse_keeps_negative_zero() -> None:
    """-0.0 keeps its sign."""
    assert math.copysign(1.0, parse_json("-0.0")) == -1.0


def test_parse_accepts_nesting_up_to_the_limit() -> None:
    """Arrays nested MAX_DEPTH deep parse."""
    value = parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    depth = 0
    while isinstance(value, list) and value:
        value, depth = value[0], depth + 1
    assert depth == MAX_DEPTH - 1


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900, 5_000, 100_000])
def test_parse_rejects_nesting_beyond_the_limit(depth: int) -> None:
    """Deeper nesting raises JSON_INVALID and never RecursionError."""
    assert _code(parse_json, "[" * depth + "]" * depth) == "JSON_INVALID"
    assert _code(parse_json, '{"a":' * depth + "1" + "}" * depth) == "JSON_INVALID"


def test_parse_depth_check_ignores_brackets_in_strings() -> None:
    """Brackets inside strings do not count towards the nesting limit."""
    text = '["' + "[" * (MAX_DEPTH * 2) + '"]'
    assert parse_json(text) == ["[" * (MAX_DEPTH * 2)]


def test_parse_error_is_not_chained() -> None:
    """The JSONError carries a message and hides the msgspec exception."""
    with pytest.raises(JSONError) as info:
        parse_json("[1,]")
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__
    assert "trailing comma" in info.value.message


# encode_json ---------------------------------------------------------------------------------


def test_encode_sorts_keys_recursively_and_is_compact() -> None:
    """Keys are sorted at every level and no whitespace is emitted."""
    assert (
        encode_json({"b": [1, {"d": 1, "c": 2}], "a": None}) == '{"a":null,"b":[1,{"c":2,"d":1}]}'
    )


def test_encode_writes_utf8_text_unescaped() -> None:
    """Non-ASCII characters appear as themselves, not as \\u escapes."""
    assert encode_json(["é", "中", "😀"]) == '["é","中","😀"]'


def test_encode_escapes_quotes_backslashes_and_controls() -> None:
    """Quotes, backslashes and control characters are escaped."""
    assert encode_json('a"b\\c\nd\x01') == '"a\\"b\\\\c\\nd\\u0001"'


def test_encode_returns_str() -> None:
    """The result is a str, not bytes, holding the compact JSON text."""
    encoded = encode_json([1, "a", {"b": None}])
    assert isinstance(encoded, str)
    assert encoded == '[1,"a",{"b":null}]'


@pytest.mark.parametrize("value", [0.1, -0.0, 1.0, 1e300, 5e-324, 1.7976931348623157e308])
def test_encode_floats_round_trip(value: float) -> None:
    """Finite floats come back exactly, sign of zero included."""
    back = parse_json(encode_json(value))
    assert type(back) is float
    assert back == value
    assert math.copysign(1.0, back) == math.copysign(1.0, value)


def test_encode_big_integers_round_trip() -> None:
    """The largest integers parse_json accepts survive a round trip."""
    for value in (10**4300 - 1, -(10**4299) + 1, 2**200):
        assert parse_json(encode_json(value)) == value


@pytest.mark.parametrize("value", [10**4300, -(10**4299)], ids=["positive", "negative"])
def test_encode_rejects_integers_parse_cannot_read(value: int) -> None:
    """Integers longer than parse_json accepts raise JSON_INVALID."""
    assert _code(encode_json, value) == "JSON_INVALID"


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        math.inf,
        -math.inf,
        [1.0, {"x": math.nan}],
        {1: "a"},
        {("a",): 1},
        {None: 1},
        {1, 2},
        frozenset(),
        b"bytes",
        object(),
        complex(1, 2),
        "\ud800",
        {"k": "\udc00"},
    ],
)
def test_encode_rejects_non_json_values(value: Any) -> None:
    """NaN, infinities, non-str keys, lone surrogates and non-JSON types raise JSON_INVALID."""
    assert _code(encode_json, value) == "JSON_INVALID"


def test_encode_rejects_cycles() -> None:
    """A self-containing list raises JSON_INVALID instead of recursing."""
    items: list[Any] = [1]
    items.append(items)
    assert _code(encode_json, items) == "JSON_INVALID"
    mapping: dict[str, Any] = {}
    mapping["self"] = [mapping]
    assert _code(encode_json, mapping) == "JSON_INVALID"


def test_encode_accepts_shared_but_acyclic_values() -> None:
    """The same list twice in one value is not a cycle."""
    shared = [1, 2]
    assert encode_json({"a": shared, "b": shared}) == '{"a":[1,2],"b":[1,2]}'


def test_encode_refuses_a_value_that_writes_out_exponentially() -> None:
    """Sixty levels of one list held twice would write out 2**60 values: refused with a code,
    after a walk of its sixty distinct lists (not of its expansion)."""
    value: list[Any] = [0]
    for _ in range(60):
        value = [value, value]
    assert _code(encode_json, value) == "JSON_INVALID"
    # Just under the bound still encodes, the shared list written out each time.
    wide = [0] * 1000
    fine = [wide] * (MAX_ITEMS // 1001 - 1)
    assert len(encode_json(fine)) == 2 + len(fine) * (2 + 2 * 1000 - 1) + len(fine) - 1
    assert _code(encode_json, [wide] * (MAX_ITEMS // 1001 + 1)) == "JSON_INVALID"


def test_a_shared_container_is_refused_where_it_nests_too_deep() -> None:
    """A container seen first near the top and again near MAX_DEPTH is measured each time."""
    inner: list[Any] = [[[]]]  # three levels
    deep: list[Any] = inner
    for _ in range(MAX_DEPTH - 4):
        deep = [deep]
    for pair in ([inner, deep], [deep, inner]):  # either one may be walked first
        assert encode_json(pair).count("[") == 1 + 3 + (MAX_DEPTH - 4) + 3  # MAX_DEPTH deep
    for pair in ([inner, [deep]], [[deep], inner], [{"k": [deep]}, inner]):
        assert _code(encode_json, pair) == "JSON_INVALID"


def test_encode_limits_nesting() -> None:
    """MAX_DEPTH levels encode; one more raises JSON_INVALID without recursing."""
    value: list[Any] = []
    for _ in range(MAX_DEPTH - 1):
        value = [value]
    assert encode_json(value) == "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert _code(encode_json, [value]) == "JSON_INVALID"
    deep: list[Any] = []
    for _ in range(sys.getrecursionlimit() * 3):
        deep = [deep]
    assert _code(encode_json, deep) == "JSON_INVALID"


def test_encode_accepts_tuples_as_arrays() -> None:
    """Tuples encode as JSON arrays."""
    assert encode_json({"t": (1, (2,))}) == '{"t":[1,[2]]}'


def test_encode_accepts_subclasses_of_json_types() -> None:
    """Enums and other subclasses of str, int, float and dict encode as their base values."""

    class Color(enum.StrEnum):
        RED = "red"

    class Size(enum.IntEnum):
        BIG = 3

    class Name(str):
        pass

    value = OrderedDict([("z", Color.RED), ("a", Size.BIG), ("n", Name("ada"))])
    assert encode_json(value) == '{"a":3,"n":"ada","z":"red"}'


# extract_json --------------------------------------------------------------------------------


def test_extract_prefers_the_whole_text() -> None:
    """A text that is JSON is returned whole, not a fragment of it."""
    assert extract_json('{"a": [1, 2]}') == {"a": [1, 2]}
    assert extract_json("  7 ") == 7


def test_extract_reads_the_first_json_fence_that_parses() -> None:
    """A ```json block beats a bracket earlier in the prose, and a broken block is skipped."""
    text = 'Shape {"x": 1}:\n```json\n{broken\n```\nthen\n```json\n{"y": 2}\n```'
    assert extract_json(text) == {"y": 2}


def test_extract_reads_bare_fences() -> None:
    """A fence without a language is read, and may hold any JSON value."""
    assert extract_json("x\n```\n[1]\n```") == [1]
    assert extract_json("x\n```\ntrue\n```\n") is True


def test_extract_needs_fences_on_their_own_lines() -> None:
    """Inline triple backticks and backticks inside JSON strings never open a fence."""
    assert _code(extract_json, "x ```true``` y") == "JSON_NOT_FOUND"
    assert extract_json('use ```{"a": 1}``` here') == {"a": 1}
    assert extract_json('{"a```": 1, "b": "```"} 0') == {"a```": 1, "b": "```"}


def test_extract_skips_fences_of_other_languages() -> None:
    """A ```python block is not read as JSON (the bracket scan may still find its JSON)."""
    assert extract_json('```python\nprint(1)\n```\n```json\n"yes"\n```') == "yes"


def test_extract_finds_balanced_json_in_prose() -> None:
    """The first balanced value that parses is returned."""
    assert extract_json('I think {"name": "Ada"} fits; or [1].') == {"name": "Ada"}
    assert extract_json("pick [1] or [2]") == [1]


def test_extract_ignores_brackets_inside_strings() -> None:
    """Closing brackets inside JSON strings do not end the value."""
    text = 'Result: {"a": "}]", "b": ["{", "\\"}"]} trailing }'
    assert extract_json(text) == {"a": "}]", "b": ["{", '"}']}


def test_extract_recovers_from_prose_quotes_and_stray_brackets() -> None:
    """Stray openers, quotes and mismatched brackets before the JSON do not hide it."""
    assert extract_json('{ oops "quote {"a": 1}') == {"a": 1}
    assert extract_json('{oops "{"a":1}" }') == {"a": 1}
    assert extract_json('(see [1}) then {"b": 2}') == {"b": 2}
    assert extract_json('[ a "line one\nline two" ] {"c": 3}') == {"c": 3}


def test_extract_finds_the_first_inner_value_when_the_outer_fails() -> None:
    """When an outer bracket pair does not parse, a value inside it may."""
    assert extract_json('{answer: {"a": 1}}') == {"a": 1}


def test_extract_raises_not_found() -> None:
    """Text without a parsable value raises JSON_NOT_FOUND."""
    for text in ("", "no json", "{'a': 1}", "[1, 2,]", "{a}", "```json\n{x}\n```"):
        assert _code(extract_json, text) == "JSON_NOT_FOUND"


def test_extract_rejects_non_str_input() -> None:
    """A non-str input raises JSON_INVALID."""
    assert _code(extract_json, b'{"a": 1}') == "JSON_INVALID"


def test_extract_skips_candidates_nested_too_deep() -> None:
    """A deeply nested bracket run is skipped and a later value still found."""
    text = "[" * 50_000 + "x" + "]" * 50_000 + ' {"ok": true}'
    assert extract_json(text) == {"ok": True}


@pytest.mark.parametrize("text", JSON_TEXTS)
def test_extract_fails_with_a_code_on_hostile_text(text: str) -> None:
    """Adversarial text fails with JSON_NOT_FOUND (its time against the bound is
    ``bench/adversarial.py``'s)."""
    assert _code(extract_json, text) == "JSON_NOT_FOUND"
