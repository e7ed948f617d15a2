"""Tests for ``estimate_tokens`` and ``compact_messages`` and their public steps."""

from __future__ import annotations

from typing import Any

import pytest

from praxo_actors.core import (
    SUMMARY_PREFIX,
    CompactionError,
    CompactionPlan,
    apply_compaction,
    compact_messages,
    default_summary,
    estimate_tokens,
    plan_compaction,
)
from praxo_actors.models import (
    ImageBlock,
    Message,
    TextBlock,
    ToolCall,
    message_assistant,
    message_system,
    message_tool,
    message_user,
)


def conversation() -> list[Message]:
    """Return a system prompt and four 5-token turns (25 tokens)."""
    return [
        message_system("s0"),
        message_user("u1"),
        message_assistant("a1"),
        message_user("u2"),
        message_assistant("a2"),
    ]


def summary(text: str) -> Message:
    """Return the summary message compaction inserts."""
    return message_system(SUMMARY_PREFIX + text)


@pytest.mark.parametrize(
    ("message", "tokens"),
    [
        (message_user(""), 4),
        (message_user("a"), 5),
        (message_user("abcd"), 5),
        (message_user("abcde"), 6),
        (message_user("é" * 8), 6),
        (Message(role="user", content=[TextBlock("ab"), ImageBlock("u" * 99), TextBlock("cd")]), 5),
        (message_assistant("", [ToolCall("e", {"b": 1, "a": "x"})]), 8),
        (message_assistant("", [ToolCall("e", {}), ToolCall("f", {})]), 5),
        (message_assistant("abcd", [ToolCall("e", {"a": [1, 2]})]), 8),
        (message_tool("a-long-call-id", "a-long-name", "ab"), 5),
    ],
)
def test_estimate_tokens(message: Message, tokens: int) -> None:
    """The estimate is 4 + ceil(chars / 4) over text and compact sorted JSON of arguments."""
    assert estimate_tokens(message) == tokens


def test_within_budget_nothing_changes() -> None:
    """At or under max_tokens the messages come back unchanged with 0 removed."""
    messages = conversation()
    result, removed = compact_messages(messages, 25, keep_last=1)
    assert (result, removed) == (messages, 0)
    assert result is not messages


def test_over_budget_summarises_the_middle() -> None:
    """Over budget, head and tail stay and the middle becomes one default summary message."""
    messages = conversation()
    result, removed = compact_messages(messages, 24, keep_last=2)
    assert result == [
        message_system("s0"),
        summary("user: u1\nassistant: a1"),
        message_user("u2"),
        message_assistant("a2"),
    ]
    assert removed == 2
    assert messages == conversation()


def test_summarizer_gets_the_middle_and_its_text_is_used() -> None:
    """A summariser is called once with the middle messages as a new list."""
    calls: list[list[Message]] = []

    def summarizer(middle: list[Message]) -> str:
        calls.append(list(middle))
        middle.clear()  # mutating its argument must not affect the result
        return "short"

    messages = conversation()
    result, removed = compact_messages(messages, 0, keep_last=2, summarizer=summarizer)
    assert calls == [messages[1:3]]
    assert result == [message_system("s0"), summary("short"), *conversation()[3:]]
    assert removed == 2


def test_summarizer_not_called_within_budget() -> None:
    """No summariser call happens when nothing needs compacting."""

    def summarizer(middle: list[Message]) -> str:
        raise AssertionError("called")

    assert compact_messages(conversation(), 100, summarizer=summarizer)[1] == 0


@pytest.mark.parametrize("bad", ["", None, 42, ["x"], b"bytes", True])
def test_invalid_summary(bad: Any) -> None:
    """A summariser result that is not a non-empty str is COMPACTION_SUMMARY_INVALID."""
    with pytest.raises(CompactionError) as info:
        compact_messages(conversation(), 0, keep_last=1, summarizer=lambda middle: bad)
    assert info.value.code == "COMPACTION_SUMMARY_INVALID"


def test_summarizer_exception_propagates_unchanged() -> None:
    """An exception raised by the summariser is not converted into a code."""
    error = KeyError("boom")

    def summarizer(middle: list[Message]) -> str:
        raise error

    with pytest.raises(KeyError) as info:
        compact_messages(conversation(), 0, keep_last=1, summarizer=summarizer)
    assert info.value is error


def test_tail_is_extended_over_tool_results() -> None:
    """A tail that would start with a tool message grows back to the assistant call."""
    call = message_assistant("", [ToolCall("echo", {"t": "x"}, id="c1"), ToolCall("e", {}, "c2")])
    messages = [
        message_user("u1"),
        call,
        message_tool("c1", "echo", "r1"),
        message_tool("c2", "e", "r2"),
        message_user("u2"),
    ]
    for keep_last in (2, 3):
        result, removed = compact_messages(messages, 0, keep_last=keep_last)
        assert result == [summary("user: u1"), *messages[1:]]
        assert removed == 1


def test_tail_extension_stops_at_the_head() -> None:
    """When only tool results separate head and tail, nothing is compacted."""
    messages = [message_system("s"), message_tool("c", "e", "r1"), message_tool("c", "e", "r2")]
    assert compact_messages(messages, 0, keep_last=1) == (messages, 0)


def test_head_is_only_the_leading_system_messages() -> None:
    """Later system messages belong to the middle and are summarised."""
    messages = [
        message_system("s0"),
        message_system("s1"),
        message_user("u1"),
        message_system("n1"),
        message_user("u2"),
    ]
    result, removed = compact_messages(messages, 0, keep_last=1)
    assert result == [*messages[:2], summary("user: u1\nsystem: n1"), messages[4]]
    assert removed == 2


@pytest.mark.parametrize(
    "messages",
    [[], [message_system("a"), message_system("b")], conversation()],
)
def test_empty_middle_changes_nothing(messages: list[Message]) -> None:
    """With no middle to summarise, the messages come back unchanged with 0 removed."""
    assert compact_messages(messages, -1, keep_last=len(messages)) == (messages, 0)


def test_keep_last_zero_summarises_everything_after_the_head() -> None:
    """keep_last=0 leaves the head and the summary only."""
    result, removed = compact_messages(conversation(), 0, keep_last=0)
    assert result == [
        message_system("s0"),
        summary("user: u1\nassistant: a1\nuser: u2\nassistant: a2"),
    ]
    assert removed == 4


def test_negative_keep_last_is_a_value_error() -> None:
    """A negative keep_last is a programming error."""
    with pytest.raises(ValueError):
        compact_messages(conversation(), 0, keep_last=-1)


def test_default_keep_last_is_six() -> None:
    """By default the last six messages are kept."""
    messages = [message_user(f"m{i}") for i in range(8)]
    result, removed = compact_messages(messages, 0)
    assert result == [summary("user: m0\nuser: m1"), *messages[2:]]
    assert removed == 2


def test_one_pass_only() -> None:
    """The result may still exceed the budget; compaction does not loop."""
    messages = [message_user("x" * 400), message_user("y" * 400)]
    result, removed = compact_messages(messages, 10, keep_last=1)
    assert result == [summary("user: " + "x" * 200), messages[1]]
    assert removed == 1
    assert sum(estimate_tokens(m) for m in result) > 10


def test_default_summary_lines() -> None:
    """Each message gives one `role: text` line, its tool calls named after the text."""
    messages = [
        message_user("a" * 250),
        message_assistant("", [ToolCall("fs.read", {}), ToolCall("echo", {})]),
        message_assistant("checking", [ToolCall("echo", {})]),
        message_tool("c", "echo", "result"),
        Message(role="user", content=[TextBlock("look "), ImageBlock("u"), TextBlock("here")]),
        Message(role="user", content=[ImageBlock("u")]),
    ]
    assert default_summary(messages).split("\n") == [
        "user: " + "a" * 200,
        "assistant: [tool calls: fs.read, echo]",
        "assistant: checking [tool calls: echo]",
        "tool: result",
        "user: look here",
        "user: ",
    ]


def test_plan_and_apply_compose_to_compact_messages() -> None:
    """plan_compaction + apply_compaction give what compact_messages gives."""
    messages = conversation()
    plan = plan_compaction(messages, 24, keep_last=2)
    assert plan == CompactionPlan(
        head=(messages[0],), middle=tuple(messages[1:3]), tail=tuple(messages[3:])
    )
    assert plan is not None
    expected = compact_messages(messages, 24, keep_last=2)
    assert (apply_compaction(plan, default_summary(plan.middle)), len(plan.middle)) == expected
    assert plan_compaction(messages, 25) is None
    with pytest.raises(CompactionError):
        apply_compaction(plan, "")
