"""Estimate message sizes and compact a conversation that has outgrown its budget.

``compact_messages`` works in three steps that are also public, so that a driver which must call the
summariser itself (an asyncio loop, an actor) can do so between them:
:func:`plan_compaction` splits the messages, the summariser (or :func:`default_summary`) turns the
middle into text, and :func:`apply_compaction` assembles the result.

The text of a message is its ``str`` content, or the concatenation of the text of its
:class:`~praxo_actors.models.TextBlock` s; other blocks (images) count as no text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from praxo_actors._errors import CompactionError
from praxo_actors.codes import COMPACTION_SUMMARY_INVALID
from praxo_actors.core._json import encode_json
from praxo_actors.models import Message, TextBlock

__all__ = [
    "SUMMARY_PREFIX",
    "CompactionPlan",
    "apply_compaction",
    "compact_messages",
    "default_summary",
    "estimate_tokens",
    "plan_compaction",
]

#: The text that opens the system message replacing the compacted middle.
SUMMARY_PREFIX = "Summary of earlier conversation:\n"

_SUMMARY_LINE_CHARS = 200


class CompactionPlan(msgspec.Struct, frozen=True):
    """How a conversation splits: kept ``head``, summarised ``middle``, kept ``tail``."""

    head: tuple[Message, ...]
    middle: tuple[Message, ...]
    tail: tuple[Message, ...]


def estimate_tokens(message: Message) -> int:
    """Return ``4 + ceil(chars / 4)`` for ``message``.

    ``chars`` counts the code points of the message's text plus those of the compact JSON (sorted
    keys, :func:`~praxo_actors.core.encode_json`) of each tool call's arguments. Names, ids and
    non-text blocks are not counted.

    Raises:
        JSONError: ``JSON_INVALID`` when arguments are not a JSON value :func:`encode_json`
            accepts: a non-JSON object, NaN, a cycle, or nesting deeper than 512.
    """
    chars = len(_text(message))
    for call in message.tool_calls:
        chars += len(encode_json(call.arguments))
    return 4 + (chars + 3) // 4


def plan_compaction(
    messages: Sequence[Message], max_tokens: int, keep_last: int = 6
) -> CompactionPlan | None:
    """Return how to compact ``messages``, or None when they need no compaction.

    None when the estimated total is at most ``max_tokens``, or when nothing lies between the
    leading system messages (head) and the last ``keep_last`` messages (tail). The tail is extended
    backwards while it would start with a ``tool`` message, so that a result never loses its call.

    Raises:
        JSONError: ``JSON_INVALID`` when tool-call arguments are not JSON (see
            :func:`estimate_tokens`).
        ValueError: ``keep_last`` is negative.
    """
    if keep_last < 0:
        raise ValueError(f"keep_last must be >= 0, got {keep_last}")
    if sum(estimate_tokens(m) for m in messages) <= max_tokens:
        return None
    head_end = 0
    while head_end < len(messages) and messages[head_end].role == "system":
        head_end += 1
    tail_start = max(head_end, len(messages) - keep_last)
    if keep_last:
        while tail_start > head_end and messages[tail_start].role == "tool":
            tail_start -= 1
    if tail_start <= head_end:
        return None
    return CompactionPlan(
        head=tuple(messages[:head_end]),
        middle=tuple(messages[head_end:tail_start]),
        tail=tuple(messages[tail_start:]),
    )


def default_summary(messages: Sequence[Message]) -> str:
    """Return one line per message: ``role: `` and the first 200 characters of its text.

    A message with tool calls adds ``[tool calls: a, b]`` after its text (after a space when the
    text is not empty).
    """
    lines = []
    for message in messages:
        parts = [_text(message)[:_SUMMARY_LINE_CHARS]]
        if message.tool_calls:
            names = ", ".join(call.name for call in message.tool_calls)
            parts.append(f"[tool calls: {names}]")
        lines.append(f"{message.role}: " + " ".join(part for part in parts if part))
    return "\n".join(lines)


def apply_compaction(plan: CompactionPlan, summary: object) -> list[Message]:
    """Return ``head + [summary message] + tail``.

    Raises:
        CompactionError: ``COMPACTION_SUMMARY_INVALID`` when ``summary`` is not a non-empty str.
    """
    if not isinstance(summary, str) or not summary:
        raise CompactionError(
            COMPACTION_SUMMARY_INVALID, f"a summary must be a non-empty str, got {summary!r:.80}"
        )
    note = Message(role="system", content=SUMMARY_PREFIX + summary)
    return [*plan.head, note, *plan.tail]


def compact_messages(
    messages: Sequence[Message],
    max_tokens: int,
    keep_last: int = 6,
    summarizer: Callable[[list[Message]], object] | None = None,
) -> tuple[list[Message], int]:
    """Replace the middle of an over-budget conversation with one summary message.

    Args:
        messages: The conversation; never mutated.
        max_tokens: Budget for the total of :func:`estimate_tokens`.
        keep_last: How many trailing messages to keep (extended over leading ``tool`` messages).
        summarizer: Called with the middle messages (a new list); must return a non-empty str.
            None uses :func:`default_summary`. An exception it raises propagates unchanged.

    Returns:
        ``(messages, removed)``: a new list, and how many messages the summary replaced (0 when
        nothing was compacted). One pass only: the result may still exceed ``max_tokens``.

    Raises:
        CompactionError: ``COMPACTION_SUMMARY_INVALID`` when the summariser returns anything but a
            non-empty str.
        JSONError: ``JSON_INVALID`` when tool-call arguments are not JSON (see
            :func:`estimate_tokens`).
        ValueError: ``keep_last`` is negative.
    """
    plan = plan_compaction(messages, max_tokens, keep_last)
    if plan is None:
        return list(messages), 0
    middle = list(plan.middle)
    summary = default_summary(middle) if summarizer is None else summarizer(middle)
    return apply_compaction(plan, summary), len(plan.middle)


def _text(message: Message) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextBlock))
