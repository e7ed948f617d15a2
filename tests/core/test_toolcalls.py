"""Tests for parse_tool_calls, parse_tool_call and strip_tool_calls."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from _hostile import TOOL_CALL_TEXTS

from praxo_actors.core import (
    ToolCallError,
    parse_tool_call,
    parse_tool_calls,
    strip_tool_calls,
)
from praxo_actors.models import ToolCall


def _code(text: Any) -> str:
    with pytest.raises(ToolCallError) as info:
        parse_tool_calls(text)
    return info.value.code


def _names(text: str) -> list[str]:
    return [call.name for call in parse_tool_calls(text)]


# Canonical JSON ------------------------------------------------------------------------------


def test_canonical_object_is_a_call() -> None:
    """A whole-text object with name and arguments is one call."""
    calls = parse_tool_calls('{"name": "echo", "arguments": {"text": "hi"}, "id": "c1"}')
    assert calls == [ToolCall(name="echo", arguments={"text": "hi"}, id="c1")]


def test_canonical_array_is_a_list_of_calls() -> None:
    """A whole-text array of call objects gives every call in order."""
    text = '[{"name": "a", "arguments": {}}, {"name": "b", "parameters": {"x": 1}}]'
    assert parse_tool_calls(text) == [
        ToolCall(name="a", arguments={}),
        ToolCall(name="b", arguments={"x": 1}),
    ]


def test_canonical_call_in_a_fence_that_is_the_whole_text() -> None:
    """A fenced block that is the whole text is read as canonical JSON."""
    assert _names('```json\n{"name": "f", "arguments": {}}\n```') == ["f"]
    assert _names('\n```\n[{"name": "f", "arguments": {}}]\n```\n') == ["f"]


def test_object_without_arguments_is_an_answer() -> None:
    """{"name": "Ada"} is a structured answer, not a call."""
    assert parse_tool_calls('{"name": "Ada"}') == []
    assert parse_tool_calls('{"name": "Ada", "age": 36}') == []


@pytest.mark.parametrize(
    "text", ["[]", "[1, 2]", '[{"name": "a", "arguments": {}}, {"name": "b"}]', '"x"', "42", "null"]
)
def test_other_json_documents_are_answers(text: str) -> None:
    """JSON that is not a call or a non-empty list of calls holds no calls."""
    assert parse_tool_calls(text) == []


def test_markup_inside_a_json_document_is_data() -> None:
    """Tags inside the strings of a JSON answer are not calls."""
    assert parse_tool_calls('{"msg": "<tool.rm>{}</tool.rm>\\ntool.rm"}') == []


def test_arguments_win_over_parameters() -> None:
    """When both keys are present, arguments is used."""
    call = parse_tool_call('{"name": "f", "arguments": {"a": 1}, "parameters": {"b": 2}}')
    assert call.arguments == {"a": 1}


def test_canonical_errors() -> None:
    """Call-shaped JSON with a bad name, arguments or id raises its code."""
    assert _code('{"name": "f", "arguments": [1]}') == "TOOL_CALL_INVALID_ARGUMENTS"
    assert _code('{"name": "f", "arguments": null}') == "TOOL_CALL_INVALID_ARGUMENTS"
    assert _code('{"name": null, "arguments": {}}') == "TOOL_CALL_INVALID_NAME"
    assert _code('{"name": "a b", "arguments": {}}') == "TOOL_CALL_INVALID_NAME"
    assert _code('{"name": "f", "arguments": {}, "id": 3}') == "TOOL_CALL_MALFORMED"


def test_canonical_after_leading_reasoning() -> None:
    """Think blocks before a canonical call are skipped; the call is still canonical."""
    text = "<think>one</think>\n<think>two</think>\n" + '{"name": "f", "arguments": {}}'
    assert _names(text) == ["f"]
    assert strip_tool_calls(text) == "<think>one</think>\n<think>two</think>"


# Arguments -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "f", "arguments": "{\\"q\\": 1}"}',
        '<tool_call>{"name": "f", "arguments": "{\\"q\\": 1}"}</tool_call>',
        '<tool_call name="f">"{\\"q\\": 1}"</tool_call>',
        '<tool.f>"{\\"q\\": 1}"</tool.f>',
    ],
)
def test_string_encoded_arguments_are_decoded(text: str) -> None:
    """Arguments given as a JSON string holding an object are decoded."""
    assert parse_tool_call(text).arguments == {"q": 1}


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "f", "arguments": "[1]"}',
        '{"name": "f", "arguments": "not json"}',
        '{"name": "f", "arguments": 5}',
        '<tool_call name="f">"x"</tool_call>',
        '<tool.f>[{"a": 1}]</tool.f>',
        "<tool.f>true</tool.f>",
    ],
)
def test_arguments_that_are_not_objects(text: str) -> None:
    """Arguments that are not an object (directly or string-encoded) raise INVALID_ARGUMENTS."""
    assert _code(text) == "TOOL_CALL_INVALID_ARGUMENTS"


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "f", "arguments": ""}',
        '<tool_call name="f"></tool_call>',
        '<tool_call name="f">  \n </tool_call>',
        "<tool.f></tool.f>",
        "<tool.f />",
        '<tool_call>{"name": "f"}</tool_call>',
        "tool.f",
    ],
)
def test_empty_arguments_mean_an_empty_object(text: str) -> None:
    """An empty body, empty string, missing Hermes arguments or bare line mean {}."""
    assert parse_tool_call(text) == ToolCall(name="f", arguments={})


# XML-style and Hermes ------------------------------------------------------------------------


def test_xml_style_call_with_id() -> None:
    """The name and id attributes give the call's name and id."""
    call = parse_tool_call('Sure.\n<tool_call name="echo" id="c9">{"text": "hi"}</tool_call>')
    assert call == ToolCall(name="echo", arguments={"text": "hi"}, id="c9")


def test_hermes_call_with_attribute_id() -> None:
    """An id attribute on a Hermes tag overrides an id key in the body."""
    call = parse_tool_call(
        '<tool_call id="t">{"name": "f", "arguments": {}, "id": "b"}</tool_call>'
    )
    assert call.id == "t"


def test_closing_tag_inside_a_string_does_not_end_the_body() -> None:
    """</tool_call> inside a JSON string (even after an escaped quote) is part of the value."""
    call = parse_tool_call('<tool_call name="w">{"t": "x\\"</tool_call>", "u": 1}</tool_call>')
    assert call.arguments == {"t": 'x"</tool_call>', "u": 1}


def test_first_closing_tag_outside_strings_ends_the_body() -> None:
    """Unbalanced brackets do not stretch the body past the first closing tag."""
    text = '<tool_call name="f">{"a": [</tool_call> <tool_call name="g">{}</tool_call>'
    assert _code(text) == "TOOL_CALL_INVALID_JSON"


def test_hermes_errors() -> None:
    """Hermes bodies without a name, or that are not objects, raise their codes."""
    assert _code("<tool_call></tool_call>") == "TOOL_CALL_INVALID_NAME"
    assert _code('<tool_call>{"arguments": {}}</tool_call>') == "TOOL_CALL_INVALID_NAME"
    assert _code('<tool_call>"f"</tool_call>') == "TOOL_CALL_MALFORMED"
    assert _code("<tool_call>{name: f}</tool_call>") == "TOOL_CALL_INVALID_JSON"


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call name="f">{}',
        '<tool_call name="f">{"a": "</tool_call>',
        "<tool_call",
        '<tool_call name="f" oops>{}</tool_call>',
        '<tool_call name="f>{}</tool_call>',
        '<tool_call name="f" name="g">{}</tool_call>',
        '<tool_call name="f">{}</tool.f>',
    ],
)
def test_malformed_xml_tags(text: str) -> None:
    """Unclosed, unterminated, repeated-attribute and mismatched tags raise MALFORMED."""
    assert _code(text) == "TOOL_CALL_MALFORMED"


def test_similar_tag_names_are_not_calls() -> None:
    """<tool_calls> and <tool_caller> are text, not calls."""
    assert parse_tool_calls("<tool_calls>x</tool_calls> <tool_caller/>") == []


# Dotted tags ---------------------------------------------------------------------------------


def test_dotted_tag_names_the_call_after_tool() -> None:
    """<tool.fs.read> names the call fs.read."""
    call = parse_tool_call('<tool.fs.read id="r1">{"path": "a"}</tool.fs.read>')
    assert call == ToolCall(name="fs.read", arguments={"path": "a"}, id="r1")


def test_dotted_tag_must_close_with_its_own_name() -> None:
    """A closing tag of another name is MALFORMED, as is a missing one."""
    assert _code("<tool.a>{}</tool.b>") == "TOOL_CALL_MALFORMED"
    assert _code("<tool.a>{}</tool.a.b>") == "TOOL_CALL_MALFORMED"
    assert _code("<tool.a>{}</tool_call>") == "TOOL_CALL_MALFORMED"
    assert _code("<tool.a>{}") == "TOOL_CALL_MALFORMED"


def test_dotted_tag_ignores_a_closing_tag_in_a_string() -> None:
    """A matching closing tag inside a JSON string does not end the body."""
    assert parse_tool_call('<tool.a>{"x": "</tool.a>"}</tool.a>').arguments == {"x": "</tool.a>"}


def test_dotted_tag_with_an_invalid_name() -> None:
    """A dotted tag whose name breaks the rule raises INVALID_NAME."""
    assert _code("<tool.1a>{}</tool.1a>") == "TOOL_CALL_INVALID_NAME"
    assert _code("<tool.a.1b>{}</tool.a.1b>") == "TOOL_CALL_INVALID_NAME"


# Dotted lines --------------------------------------------------------------------------------


def test_dotted_lines_are_calls() -> None:
    """Lines holding tool.NAME and optionally one object are calls, indented or not."""
    text = 'Plan:\n  tool.fs.read {"path": "x"}\r\ntool.ping\ntool.echo{"a": 1}\n'
    assert parse_tool_calls(text) == [
        ToolCall(name="fs.read", arguments={"path": "x"}),
        ToolCall(name="ping", arguments={}),
        ToolCall(name="echo", arguments={"a": 1}),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "tool.py is broken",
        "tool.run()",
        "tool.",
        "tool.py.",
        'Use tool.echo {"a": 1} like this.',
        "the tool.echo line",
        "tool.echo [1]",
        'tool.echo "x"',
    ],
)
def test_dotted_prose_is_not_a_call(text: str) -> None:
    """A line whose rest is not empty or an object, or that does not start with tool., is prose."""
    assert parse_tool_calls(text) == []
    assert strip_tool_calls(text) == text.strip()


def test_dotted_line_errors() -> None:
    """A dotted line with a broken object or a bad name raises its code."""
    assert _code("tool.echo {oops}") == "TOOL_CALL_INVALID_JSON"
    assert _code('tool.echo {"a": 1} thanks') == "TOOL_CALL_INVALID_JSON"
    assert _code("tool.echo {\n}") == "TOOL_CALL_INVALID_JSON"
    assert _code('tool.9x {"a": 1}') == "TOOL_CALL_INVALID_NAME"


# Names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["a", "_", "A_b-c", "fs.read", "a.b.c", "x1.y-2", "a" * 64, "a." + "b" * 62]
)
def test_valid_names(name: str) -> None:
    """Names matching the rule and at most 64 characters long are accepted."""
    assert parse_tool_call(f'<tool_call name="{name}">{{}}</tool_call>').name == name


@pytest.mark.parametrize(
    "name", ["", "1a", "-a", "a..b", ".a", "a.", "a.1b", "a b", "a/b", "é", "a" * 65, "a.b" * 22]
)
def test_invalid_names(name: str) -> None:
    """Names breaking the rule or longer than 64 characters raise INVALID_NAME."""
    assert _code(f'<tool_call name="{name}">{{}}</tool_call>') == "TOOL_CALL_INVALID_NAME"
    assert _code(f'{{"name": "{name}", "arguments": {{}}}}') == "TOOL_CALL_INVALID_NAME"


def test_sixty_five_character_dotted_line_is_invalid() -> None:
    """A dotted line with a well-formed 65-character name raises INVALID_NAME."""
    assert _code("tool." + "n" * 65) == "TOOL_CALL_INVALID_NAME"


# Think blocks --------------------------------------------------------------------------------


def test_think_blocks_never_yield_calls() -> None:
    """Calls and errors inside <think>…</think> are ignored."""
    text = '<think>tool.rm {"all": true}\n<tool.bad>{</think>\n<tool.ok>{}</tool.ok>'
    assert _names(text) == ["ok"]


def test_unclosed_think_runs_to_the_end() -> None:
    """An unclosed <think> hides everything after it."""
    assert _names("<tool.a/> <think>tool.b\n<tool.c/>") == ["a"]


def test_orphan_closing_think_ends_leading_reasoning() -> None:
    """A </think> before any <think> marks the text before it as reasoning."""
    assert _names("tool.draft\n<tool.x/></think>\ntool.final") == ["final"]


def test_orphan_closing_think_hides_broken_markup_before_it() -> None:
    """Broken or unclosed markup in leading reasoning is dropped with the reasoning."""
    assert _names("<tool.x>{bad}</tool.x>\n</think>\ntool.real") == ["real"]
    assert _names('maybe <tool_call name="x">{"a": \n</think>\n<tool.real/>') == ["real"]


def test_closing_think_inside_a_valid_call_is_data() -> None:
    """A </think> inside a valid call's JSON string does not end any reasoning."""
    call = parse_tool_call('<tool_call name="a">{"</think>": null}</tool_call>')
    assert call.arguments == {"</think>": None}


def test_think_inside_a_call_body_is_data() -> None:
    """A <think> tag inside a call's JSON string is part of the arguments."""
    call = parse_tool_call('<tool_call name="n">{"t": "<think>"}</tool_call> tool.after')
    assert call.arguments == {"t": "<think>"}


# Order, errors, ids --------------------------------------------------------------------------


def test_calls_come_in_text_order_across_formats() -> None:
    """Mixed formats are returned in order of appearance."""
    text = (
        '<tool_call>{"name": "one", "arguments": {}}</tool_call>\n'
        "tool.two\n"
        '<tool.three>{}</tool.three><tool_call name="four"/>'
    )
    assert _names(text) == ["one", "two", "three", "four"]


def test_each_call_is_checked_in_a_fixed_order() -> None:
    """Tag structure comes before the name, the name before the body, the body before arguments."""
    assert _code('<tool_call name="a b">{}</tool.x>') == "TOOL_CALL_MALFORMED"
    assert _code('<tool_call name="a b">{bad</tool_call>') == "TOOL_CALL_INVALID_NAME"
    assert _code("<tool.1x>[1]</tool.1x>") == "TOOL_CALL_INVALID_NAME"
    assert _code("tool.1x {bad") == "TOOL_CALL_INVALID_NAME"
    assert (
        _code('<tool_call>{"name": "a b", "arguments": 1</tool_call>') == "TOOL_CALL_INVALID_JSON"
    )
    assert _code('<tool_call>{"name": "a b", "arguments": 1}</tool_call>') == (
        "TOOL_CALL_INVALID_NAME"
    )


def test_the_first_error_in_text_order_is_raised() -> None:
    """With several broken calls, the earliest one's code is raised."""
    text = "<tool.a>{}</tool.a> <tool.b>[1]</tool.b> <tool.c>{</tool.c> <tool.d>{}"
    assert _code(text) == "TOOL_CALL_INVALID_ARGUMENTS"
    assert _code("<tool.d>{}</tool.x> <tool.b>[1]</tool.b>") == "TOOL_CALL_MALFORMED"


def test_ids_are_never_generated() -> None:
    """Calls without an id in the text have id None."""
    assert all(call.id is None for call in parse_tool_calls("tool.a\n<tool.b/>"))


def test_parse_tool_call_returns_the_first_or_raises_not_found() -> None:
    """parse_tool_call returns the first call, or raises TOOL_CALL_NOT_FOUND."""
    assert parse_tool_call("tool.a\ntool.b").name == "a"
    with pytest.raises(ToolCallError) as info:
        parse_tool_call("no calls")
    assert info.value.code == "TOOL_CALL_NOT_FOUND"


def test_non_str_input() -> None:
    """parse_tool_calls raises MALFORMED and strip_tool_calls TypeError for non-str input."""
    assert _code(b"tool.a") == "TOOL_CALL_MALFORMED"
    with pytest.raises(TypeError):
        strip_tool_calls(b"tool.a")  # type: ignore[arg-type]


# strip_tool_calls ----------------------------------------------------------------------------


def test_strip_removes_recognised_calls_and_trims() -> None:
    """Markup of every call is removed (dotted lines with their newline) and the rest trimmed."""
    text = ' Sure.\n<tool_call name="a">{}</tool_call>\ntool.b\n<tool.c/> Done. '
    assert strip_tool_calls(text) == "Sure.\n\n Done."


def test_strip_leaves_malformed_and_invalid_markup() -> None:
    """Broken calls stay in place while valid ones around them are removed."""
    text = "x <tool.a>{}</tool.b> <tool.ok/> <tool.c>{bad}</tool.c> <tool.d>{"
    assert strip_tool_calls(text) == "x <tool.a>{}</tool.b>  <tool.c>{bad}</tool.c> <tool.d>{"


def test_strip_keeps_think_blocks_and_their_markup() -> None:
    """Reasoning is not call markup: it stays, calls inside it included."""
    text = "<think><tool.a/></think> <tool.b/>"
    assert strip_tool_calls(text) == "<think><tool.a/></think>"


def test_strip_canonical_documents() -> None:
    """A canonical call strips to empty; an answer or a broken call is only trimmed."""
    assert strip_tool_calls(' {"name": "f", "arguments": {}} ') == ""
    assert strip_tool_calls(' {"name": "Ada"} ') == '{"name": "Ada"}'
    assert strip_tool_calls('{"name": "f", "arguments": 1}') == '{"name": "f", "arguments": 1}'


# Hostile input -------------------------------------------------------------------------------


@pytest.mark.parametrize("text", TOOL_CALL_TEXTS)
def test_hostile_text_is_handled_with_codes(text: str) -> None:
    """Adversarial markup is parsed and stripped, raising only ToolCallError, and what is
    stripped is no longer than the text (its time against the bound is
    ``bench/adversarial.py``'s)."""
    with contextlib.suppress(ToolCallError):
        parse_tool_calls(text)
    stripped = strip_tool_calls(text)
    assert isinstance(stripped, str) and len(stripped) <= len(text)
