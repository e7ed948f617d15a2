"""Message content as telemetry records it when asked to: GenAI message JSON, PII-redacted.

The shapes follow the OpenTelemetry GenAI semantic conventions (``gen_ai.input.messages``,
``gen_ai.output.messages``): a list of ``{"role", "parts"}`` objects whose parts are ``text``,
``tool_call`` and ``tool_call_response``. A run's span also carries OpenInference's
``input.value`` / ``output.value`` (with their ``mime_type``): the run's input and output as
text (JSON for blocks or a typed output), which trace viewers such as Phoenix list. Every
string that could hold content (text, tool arguments and results, their dict keys included)
goes through :func:`~praxo_actors.core.redact_pii` first; nothing here is used unless the
agent's options set ``capture_content=True``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from praxo_actors._errors import JSONError
from praxo_actors.core import encode_json, redact_pii, redact_value
from praxo_actors.models import ImageBlock, Message, RunResult, TextBlock

__all__ = ["input_value", "messages_json", "output_value", "value_json"]


def messages_json(messages: list[Message], finish_reason: str | None = None) -> str:
    """Return ``messages`` as GenAI message JSON with PII redacted.

    Output messages pass the ``finish_reason`` each entry must carry; input messages have none.
    """
    shaped = [_message(m) for m in messages]
    if finish_reason is not None:
        for entry in shaped:
            entry["finish_reason"] = finish_reason
    try:
        return encode_json(shaped)
    except JSONError:  # arguments that are not JSON: the run fails on them, telemetry must not
        return encode_json(redact_pii(repr(shaped)))


def value_json(value: Any) -> str:
    """Return a JSON value (a tool's arguments or result) encoded with PII redacted."""
    try:
        return encode_json(redact_value(value, keys=True))
    except JSONError:
        return encode_json(redact_pii(repr(value)))


def input_value(message: Message) -> tuple[str, str]:
    """Return a run's input as OpenInference's ``input.value`` and ``input.mime_type``."""
    if isinstance(message.content, str):
        return redact_pii(message.content), "text/plain"
    return messages_json([message]), "application/json"


def output_value(result: RunResult) -> tuple[str, str]:
    """Return a run's output as OpenInference's ``output.value`` and ``output.mime_type``."""
    if result.structured is not None:
        try:  # a typed output (a Struct, a dataclass...) as JSON values, each string redacted
            value = msgspec.to_builtins(result.structured)
        except (TypeError, ValueError):  # no JSON form: value_json records its repr
            value = result.structured
        return value_json(value), "application/json"
    return redact_pii(result.output), "text/plain"


def _message(message: Message) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    content = message.content
    if message.role == "tool":
        text = content if isinstance(content, str) else _text(content)
        parts.append(
            {"type": "tool_call_response", "id": message.tool_call_id, "response": redact_pii(text)}
        )
    elif isinstance(content, str):
        if content:
            parts.append({"type": "text", "content": redact_pii(content)})
    else:
        for block in content:
            if isinstance(block, TextBlock):
                parts.append({"type": "text", "content": redact_pii(block.text)})
            elif isinstance(block, ImageBlock):
                parts.append({"type": "uri", "modality": "image", "mime_type": block.media_type})
    for call in message.tool_calls:
        parts.append(
            {
                "type": "tool_call",
                "id": call.id,
                "name": call.name,
                "arguments": _arguments(call.arguments),
            }
        )
    return {"role": message.role, "parts": parts}


def _arguments(arguments: Any) -> Any:
    try:
        return redact_value(arguments, keys=True)
    except JSONError:  # too deep, or holding itself: the run fails on it anyway
        return redact_pii(repr(arguments))


def _text(blocks: list[Any]) -> str:
    return "".join(block.text for block in blocks if isinstance(block, TextBlock))
