"""What the agent loop does around one model call: the messages it sends, the reply it reads.

The system message and compaction before the call; PII redaction of what is sent; checks of the
reply, its usage totals, and the prose left once tool-call markup is taken out.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import Any

import msgspec

from praxo_actors._errors import JSONError
from praxo_actors.agent._effects import CallSummarizer, Effect
from praxo_actors.core import (
    apply_compaction,
    default_summary,
    encode_json,
    plan_compaction,
    redact_pii,
)
from praxo_actors.middleware import Compaction
from praxo_actors.models import Message, Response, Session, TextBlock

__all__: list[str] = []


def _instructions(instructions: Any, session: Session) -> Message | None:
    """Return the run's system message (None for no text), calling a callable once."""
    text = instructions if type(instructions) is str else instructions(session)
    if not isinstance(text, str):
        hint = ""
        if inspect.iscoroutine(text):
            text.close()  # never awaited: close it so no warning is left behind
            hint = " (they are called synchronously: an async function cannot give them)"
        raise TypeError(f"instructions must give a str, not {type(text).__name__}{hint}")
    return Message(role="system", content=text) if text else None


def _compact(
    settings: Compaction, messages: list[Message]
) -> Generator[Effect, Any, tuple[list[Message], int]]:
    """Compact ``messages``, asking the driver for the summary when a summariser is set."""
    plan = plan_compaction(messages, settings.max_tokens, settings.keep_last)
    if plan is None:
        return messages, 0
    middle = list(plan.middle)
    if settings.summarizer is None:
        summary: Any = default_summary(middle)
    else:
        summary = yield CallSummarizer(settings.summarizer, middle)
    return apply_compaction(plan, summary), len(plan.middle)


def _add_usage(total: dict[str, int], usage: dict[str, Any]) -> None:
    """Add a response's integer counters (tokens) to the run's totals; others are not summed."""
    for key, value in usage.items():
        if type(value) is int:
            total[key] = total.get(key, 0) + value


def _text(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextBlock))


def _prose(content: str | list[Any], prose: str) -> str | list[Any]:
    """Return ``content`` with its text replaced by ``prose`` (other blocks kept, first)."""
    if isinstance(content, str):
        return prose
    kept = [block for block in content if not isinstance(block, TextBlock)]
    if not kept:
        return prose
    return [*kept, TextBlock(prose)] if prose else kept


def _may_hold_calls(text: str) -> bool:
    # Every call format (and every malformed one) needs "tool" (tags, dotted names) or a JSON
    # object or array (canonical calls); plain answers skip the parser, which costs ~10 us.
    return "tool" in text or "{" in text or "[" in text


def _json_or_none(value: Any) -> bool:
    if value is None:
        return True
    if not isinstance(value, dict):
        return False
    try:
        encode_json(value)
    except JSONError:
        return False
    return True


def _bad_response(result: Response) -> TypeError:
    if type(result.message) is not Message:
        return TypeError(f"Response.message must be a Message, not {type(result.message).__name__}")
    return TypeError("Response.usage must be a JSON object or None")


def _not_a_response(result: Any) -> TypeError:
    hint = " (an async model needs arun_agent)" if hasattr(result, "__await__") else ""
    return TypeError(
        f"a model must return Response or ModelError, not {type(result).__name__}{hint}"
    )


def _redact_messages(
    messages: list[Message], cache: dict[int, tuple[Message, Message]]
) -> list[Message]:
    """Return PII-redacted copies of ``messages``; tool calls and other blocks stay as they are."""
    out = []
    for message in messages:
        # Messages are frozen, so a redaction computed on an earlier step stays valid; the
        # cached original guards against a recycled id().
        hit = cache.get(id(message))
        if hit is None or hit[0] is not message:
            hit = (message, _redact_message(message))
            cache[id(message)] = hit
        out.append(hit[1])
    return out


def _redact_message(message: Message) -> Message:
    content = message.content
    if isinstance(content, str):
        redacted: str | list[Any] = redact_pii(content)
    else:
        redacted = [
            TextBlock(redact_pii(block.text)) if isinstance(block, TextBlock) else block
            for block in content
        ]
    if redacted == content:
        return message
    return msgspec.structs.replace(message, content=redacted)
