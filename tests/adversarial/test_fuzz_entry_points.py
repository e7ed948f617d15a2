"""Fuzz every Core entry point: on hostile input each returns or raises a PraxoError with a code.

Inputs are of the declared types (``str`` text, JSON-ish values, ``Message`` lists) with hostile
contents: markup fragments, lone surrogates, NUL bytes, nesting past every limit, non-JSON objects,
catastrophic patterns. Any exception that is not a ``PraxoError`` (a ``RecursionError``, a
``UnicodeEncodeError``, a ``TypeError`` from deep inside) fails the test, and so does a hang (the
suite's global timeout). ``PRAXO_FUZZ_EXAMPLES`` sets the examples per target: ``make fuzz`` runs
10,000; the suite runs a few hundred, a fixed sequence under ``CI``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from praxo_actors.core import (
    PathPolicy,
    PraxoError,
    compact_messages,
    dump_checkpoint,
    encode_json,
    estimate_tokens,
    extract_json,
    load_checkpoint,
    parse_json,
    parse_tool_call,
    parse_tool_calls,
    plan_compaction,
    redact_pii,
    redact_value,
    strip_tool_calls,
    validate_schema,
)
from praxo_actors.models import ImageBlock, Message, Session, TextBlock, ToolCall

EXAMPLES = int(os.environ.get("PRAXO_FUZZ_EXAMPLES", "100" if os.environ.get("CI") else "300"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
CODE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def returns_or_codes(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``call``; let only a PraxoError with a well-formed code escape, and swallow it."""
    try:
        return call(*args, **kwargs)
    except PraxoError as exc:
        assert CODE.fullmatch(exc.code), exc.code
        assert exc.message
        return None


# -- text -----------------------------------------------------------------------------------------

FRAGMENTS = [
    *("<tool_call>", "</tool_call>", '<tool_call name="a">', "<tool_call id='1'>", "<tool.a>"),
    *("</tool.a>", "</tool.b>", "<tool.a/>", "<think>", "</think>", "tool.", "tool.a", "tool.a "),
    *("tool.py is broken", "\n", "\r\n", " ", "\t", "{", "}", "[", "]", '"', "\\", '\\"', ":", ","),
    *("```", "```json\n", '"name"', '"arguments"', '"parameters"', "{}", "[]", "null", "1e400"),
    *("-0", "1", "a", "@", "a@b.io", "1234", "4111 1111 1111 1111", "555-123-4567", "078-05-1120"),
    *("(555)", "+1", "..", "/", "//", ".git", ".env", "x.pem", "\\u00e9", "\\ud800"),
    *("\ud800", "\udfff", "\udc80", "\x00", "\x01", "\ufeff", "\u2028", "é", "😀", "١"),
]  # fmt: skip
fragments = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)
nested_text = st.builds(
    lambda depth, opener, tail: opener * depth + tail,
    st.integers(0, 1_200),
    st.sampled_from(["[", "{", '{"a":', "<tool_call>", "(", "a/../"]),
    st.sampled_from(["", "]", "}", "1", '"', "</tool_call>"]),
)
texts = fragments | st.text(max_size=60) | nested_text


@FUZZ
@given(texts)
def test_json_helpers(text: str) -> None:
    """parse_json and extract_json return a value or raise a code."""
    returns_or_codes(parse_json, text)
    returns_or_codes(extract_json, text)


@FUZZ
@given(texts)
def test_tool_call_parsers(text: str) -> None:
    """The tool-call parsers return calls or raise a code; stripping returns text."""
    returns_or_codes(parse_tool_calls, text)
    returns_or_codes(parse_tool_call, text)
    assert isinstance(strip_tool_calls(text), str)


@FUZZ
@given(texts)
def test_redact_pii(text: str) -> None:
    """Redaction returns a string and is idempotent."""
    once = redact_pii(text)
    assert redact_pii(once) == once


# -- values ---------------------------------------------------------------------------------------


def _deep(depth: int, kind: str) -> Any:
    value: Any = "a@b.io"
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value} if kind == "dict" else (value,)
    return value


def _cycle() -> list[Any]:
    value: list[Any] = [1]
    value.append(value)
    return value


leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(4_290, 4_310).map(lambda digits: (-1) ** digits * 10**digits)  # read-back limit
    | st.floats()
    | texts
    | st.binary(max_size=4)
    | st.sampled_from([object(), {1, 2}, frozenset(), math.inf, -math.nan])
)
hostile_values = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=3)
        | st.tuples(children, children)
        | st.dictionaries(texts | st.integers(), children, max_size=3)
    ),
    max_leaves=10,
) | st.builds(_deep, st.integers(0, 1_200), st.sampled_from(["list", "dict", "tuple"]))
hostile_values = hostile_values | st.builds(_cycle)


@FUZZ
@given(hostile_values)
def test_encode_json(value: Any) -> None:
    """encode_json returns text that parses back, or raises a code."""
    text = returns_or_codes(encode_json, value)
    if text is not None:
        parse_json(text)


@FUZZ
@given(hostile_values)
def test_redact_value(value: Any) -> None:
    """redact_value returns a copy or raises a code, on any depth, cycle or object."""
    returns_or_codes(redact_value, value)


# -- schemas --------------------------------------------------------------------------------------

PATTERN_PIECES = [
    *("a", "b", "(", ")", "(?:", "|", "*", "+", "?", "{2}", "{1,}", "{0,3}", "{99999}", "^", "$"),
    *(".", "\\d", "\\w", "\\s", "\\b", "[a-z]", "[^\\W]", "\\1", "(?=", "(?!", "(?<=a)", "(?>"),
    *("*+", "(?i)", "(?m)", "(?s:", "\\p{L}", "\\", "\ud800", "é"),
]  # fmt: skip
patterns = st.lists(st.sampled_from(PATTERN_PIECES), max_size=12).map("".join) | st.sampled_from(
    ["^(a+)+$", "^(a|aa)+$", r"^(\w+\s?)*$", r"\d+$", "a[ab]{20}c", "(a*)*b", "(?:a?){30}a{30}"]
)
keyword_values = st.none() | st.integers(-3, 5) | st.floats() | texts | st.booleans()


SCHEMA_KEYWORDS = [
    *("type", "pattern", "minLength", "maxItems", "enum", "const", "$ref", "required"),
    *("multipleOf", "minimum", "uniqueItems", "additionalProperties", "junk"),
]


def _schema_leaf(draw: st.DrawFn) -> Any:
    keyword = draw(st.sampled_from(SCHEMA_KEYWORDS))
    if keyword == "pattern":
        return {"pattern": draw(patterns | keyword_values)}
    if keyword == "$ref":
        target = draw(st.sampled_from(["#", "#/$defs/a", "#/$defs/b", "#/nope", "x.json", 1]))
        return {"$ref": target}
    if keyword == "type":
        return {"type": draw(st.sampled_from(["string", "integer", ["null", "array"], "text"]))}
    return {keyword: draw(keyword_values | st.lists(keyword_values, max_size=3))}


@st.composite
def schemas(draw: st.DrawFn, depth: int = 0) -> Any:
    """Draw a schema-ish value: keywords, applicators and local references, some malformed."""
    choice = draw(st.integers(0, 6 if depth < 4 else 0))
    if choice == 0:
        return (
            draw(st.sampled_from([True, False, 5, None]))
            if draw(st.booleans())
            else (_schema_leaf(draw))
        )
    if choice in (1, 2):
        keyword = draw(st.sampled_from(["anyOf", "oneOf", "allOf"]))
        return {keyword: draw(st.lists(schemas(depth + 1), max_size=3))}
    if choice == 3:
        return {"properties": draw(st.dictionaries(texts, schemas(depth + 1), max_size=3))}
    if choice == 4:
        return {"items": draw(schemas(depth + 1)), "not": draw(schemas(depth + 1))}
    if choice == 5:
        defs = {"a": draw(schemas(depth + 1)), "b": draw(schemas(depth + 1))}
        return {"$defs": defs, "$ref": draw(st.sampled_from(["#/$defs/a", "#/$defs/b", "#"]))}
    return {**_schema_leaf(draw), **_schema_leaf(draw)}


schema_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(texts, children, max_size=3),
    max_leaves=8,
) | st.builds(_deep, st.integers(0, 1_200), st.sampled_from(["list", "dict"]))


# re warns (FutureWarning) about patterns such as "[[" whose meaning may change; a warning is no
# exception, but this suite's filterwarnings=error would make it one.
@pytest.mark.filterwarnings("ignore::FutureWarning")
@FUZZ
@given(schemas(), schema_values)
def test_validate_schema(schema: Any, value: Any) -> None:
    """validate_schema returns a list of errors, whatever the schema and the value."""
    errors = validate_schema(schema, value)
    assert isinstance(errors, list)
    assert all(error.keyword for error in errors)


# -- paths ----------------------------------------------------------------------------------------

path_texts = texts | st.lists(
    st.sampled_from(["/", "..", ".", "a", ".git", "x.pem", "\ud800", "\x00", "~", " "]), max_size=12
).map("".join)
ROOT = "/nonexistent/praxo-fuzz-root"


@FUZZ
@given(
    roots=st.lists(path_texts, max_size=3),
    deny=st.lists(texts, max_size=3),
    path=path_texts,
    base=st.none() | path_texts,
    resolve=st.booleans(),
)
def test_path_policy(
    roots: list[str], deny: list[str], path: str, base: str | None, resolve: bool
) -> None:
    """Building a policy and checking a path return or raise a code, symlinks resolved or not."""
    policy = returns_or_codes(PathPolicy, roots, deny=deny)
    if policy is not None:
        returns_or_codes(policy.check, path, base)
    fixed = PathPolicy([ROOT], deny=[".git", "*.pem"], resolve_symlinks=resolve)
    returns_or_codes(fixed.check, path, base)
    returns_or_codes(fixed.check, path)


# -- checkpoints ----------------------------------------------------------------------------------

json_leaves = st.none() | st.booleans() | st.integers(-5, 5) | texts
metadata = st.dictionaries(texts, hostile_values | json_leaves, max_size=3)
blocks = st.lists(st.builds(TextBlock, texts) | st.builds(ImageBlock, texts, st.none()), max_size=2)
calls = st.lists(
    st.builds(ToolCall, texts, st.dictionaries(texts, hostile_values, max_size=2)), max_size=2
)
messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=texts | blocks,
    tool_calls=calls,
    tool_call_id=st.none() | texts,
    name=st.none() | texts,
)
sessions = st.builds(Session, id=texts, messages=st.lists(messages, max_size=4), metadata=metadata)


@st.composite
def checkpoint_bytes(draw: st.DrawFn) -> bytes | str:
    """Draw checkpoint data: random bytes or text, or a real checkpoint with a slice replaced."""
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(st.binary(max_size=200))
    if kind == 1:
        return draw(texts)
    session = Session(id=draw(texts), messages=[Message(role="user", content=draw(texts))])
    try:
        data = dump_checkpoint(session, key=draw(st.sampled_from([None, b"k"])))
    except PraxoError:
        return draw(texts)
    start = draw(st.integers(0, len(data)))
    end = draw(st.integers(start, len(data)))
    insert = draw(st.sampled_from(FRAGMENTS)).encode("utf-8", "surrogatepass")
    return data[:start] + insert + data[end:]


@FUZZ
@given(checkpoint_bytes(), st.sampled_from([None, b"k"]))
def test_load_checkpoint(data: bytes | str, key: bytes | None) -> None:
    """load_checkpoint revives a session or raises a code, with a key or without."""
    returns_or_codes(load_checkpoint, data, key=key)


@FUZZ
@given(sessions, st.sampled_from([None, b"k"]))
def test_dump_checkpoint(session: Session, key: bytes | None) -> None:
    """dump_checkpoint writes data that loads back, or raises a code for non-JSON contents."""
    data = returns_or_codes(dump_checkpoint, session, key=key)
    if data is not None:
        load_checkpoint(data, key=key)


# -- compaction -----------------------------------------------------------------------------------


@FUZZ
@given(st.lists(messages, max_size=12), st.integers(-10, 400), st.integers(0, 8))
def test_compaction(conversation: list[Message], max_tokens: int, keep_last: int) -> None:
    """Estimates, plans and compaction return or raise a code for any tool-call arguments."""
    for message in conversation:
        returns_or_codes(estimate_tokens, message)
    returns_or_codes(plan_compaction, conversation, max_tokens, keep_last)
    returns_or_codes(compact_messages, conversation, max_tokens, keep_last)
