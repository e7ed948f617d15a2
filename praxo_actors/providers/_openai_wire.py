"""Messages and tools to OpenAI chat-completion JSON, and a completion (or its stream) back.

The shapes are those of ``POST /v1/chat/completions``, which vLLM, llama.cpp's server and
Ollama speak too.
"""

from __future__ import annotations

from typing import Any

from praxo_actors._errors import ToolCallError
from praxo_actors.core import encode_json
from praxo_actors.models import ImageBlock, Message, ModelError, Response, ToolCall, ToolSpec
from praxo_actors.providers._errors import MODEL_BAD_RESPONSE
from praxo_actors.providers._telemetry import text_or_none
from praxo_actors.providers._wire import decode_arguments, pair_calls, text_calls, text_of, typed

__all__ = ["Assembler", "from_completion", "to_messages", "to_tools", "usage_of"]

_TEXT = (str, type(None))
_LIST = (list, type(None))


def to_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Return ``messages`` as chat-completion messages.

    Raises:
        BadRequest: An image where the API takes text only (system, assistant, tool).
    """
    ids = pair_calls(messages)
    wire: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role = message.role
        if role == "tool":
            answers = ids.answers[index]
            text = text_of(message.content, "tool")
            if answers is None:  # answers no call: the API would refuse a lone tool result
                wire.append({"role": "user", "content": text})
            else:
                wire.append({"role": "tool", "tool_call_id": answers, "content": text})
            continue
        item: dict[str, Any] = {"role": role}
        content, calls = ids.of(index, message) if role == "assistant" else (message.content, [])
        if role == "user" and not isinstance(content, str):
            item["content"] = [_user_part(block) for block in content]
        else:
            item["content"] = text_of(content, role)
        if calls:
            item["content"] = item["content"] or None
            item["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": encode_json(call.arguments)},
                }
                for call_id, call in zip(ids.calls[index], calls, strict=True)
            ]
        if message.name is not None and role in ("user", "system", "assistant"):
            item["name"] = message.name
        wire.append(item)
    return wire


def _user_part(block: Any) -> dict[str, Any]:
    if isinstance(block, ImageBlock):
        return {"type": "image_url", "image_url": {"url": block.url}}
    return {"type": "text", "text": block.text}


def to_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Return tool specs as chat-completion ``tools``."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]


def usage_of(usage: Any) -> dict[str, Any] | None:
    """Return a completion's usage as ``input_tokens`` / ``output_tokens``, or None."""
    if usage is None:
        return None
    counts = {
        "input_tokens": getattr(usage, "prompt_tokens", None),
        "output_tokens": getattr(usage, "completion_tokens", None),
    }
    kept = {key: value for key, value in counts.items() if type(value) is int}
    return kept or None


def from_completion(completion: Any, tool_call_format: str | None) -> Response | ModelError:
    """Return the reply of a chat completion (its first choice)."""
    choices = getattr(completion, "choices", None)
    if not choices:
        return ModelError(MODEL_BAD_RESPONSE, "openai: the completion has no choices")
    choice = typed(choices, list, "choices")[0]
    message = choice.message
    text = (
        typed(message.content, _TEXT, "message.content")
        or typed(getattr(message, "refusal", None), _TEXT, "message.refusal")
        or ""
    )
    raw = [
        (call.function.name, typed(call.id, _TEXT, "a tool call's id"), call.function.arguments)
        for call in typed(message.tool_calls, _LIST, "message.tool_calls") or ()
        if getattr(call, "function", None) is not None
    ]
    said = (getattr(completion, "id", None), getattr(completion, "model", None))
    return reply(
        text, raw, usage_of(completion.usage), choice.finish_reason, tool_call_format, said
    )


def reply(
    text: str,
    raw_calls: list[tuple[Any, Any, Any]],
    usage: dict[str, Any] | None,
    finish_reason: Any,
    tool_call_format: str | None,
    said: tuple[Any, Any] = (None, None),
) -> Response | ModelError:
    """Return the response for a reply's text and its calls as sent (name, id, JSON text);
    ``said`` is the completion's id and model, as the server gave them."""
    note = " (the answer was cut at its token limit)" if finish_reason == "length" else ""
    calls: list[ToolCall] = []
    try:
        for name, call_id, arguments in raw_calls:
            calls.append(decode_arguments(name, call_id or None, arguments, note))
    except ToolCallError as exc:
        return ModelError(exc.code, f"openai: {exc.message}")
    if not calls:
        parsed = text_calls(text, tool_call_format)
        if isinstance(parsed, ModelError):
            return parsed
        text, calls = parsed
    return Response(
        Message(role="assistant", content=text, tool_calls=calls),
        usage=usage,
        finish_reason=text_or_none(finish_reason),
        id=text_or_none(said[0]),
        model=text_or_none(said[1]),
    )


class Assembler:
    """Put a streamed completion back together: text, calls from their fragments, usage.

    Call :meth:`add` with each chunk; it returns the chunk's new text (for a ``model.delta``).
    """

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, list[Any]] = {}  # index -> [name, id, argument fragments]
        self.usage: dict[str, Any] | None = None
        self.finish_reason: Any = None
        self.said: tuple[Any, Any] = (None, None)  # the completion's id and model
        self.chunks = 0

    def add(self, chunk: Any) -> str:
        """Take one chunk; return the text it adds."""
        self.chunks += 1
        if self.said == (None, None):  # every chunk repeats them: the first one's are kept
            self.said = (getattr(chunk, "id", None), getattr(chunk, "model", None))
        if getattr(chunk, "usage", None) is not None:
            self.usage = usage_of(chunk.usage)
        added = ""
        choices = chunk.choices or []
        if not isinstance(choices, list):
            raise TypeError(f"a chunk's choices must be a list, not {type(choices).__name__}")
        for choice in choices:
            if choice.index not in (0, None):  # only the first choice is read
                continue
            delta = choice.delta
            if choice.finish_reason is not None:
                self.finish_reason = choice.finish_reason
            if delta is None:
                continue
            if delta.content:
                added += typed(delta.content, str, "delta.content")
            for position, part in enumerate(
                typed(delta.tool_calls, _LIST, "delta.tool_calls") or ()
            ):
                index = typed(part.index, (int, type(None)), "a tool call's index")
                call = self.calls.setdefault(position if index is None else index, ["", None, []])
                if part.id:
                    call[1] = typed(part.id, str, "a tool call's id")
                function = part.function
                if function is not None:
                    if function.name:
                        call[0] += typed(function.name, str, "a tool call's name")
                    if function.arguments:
                        call[2].append(typed(function.arguments, str, "a tool call's arguments"))
        if added:
            self.text.append(added)
        return added

    def response(self, tool_call_format: str | None) -> Response | ModelError:
        """Return the whole reply."""
        if self.chunks == 0:
            return ModelError(MODEL_BAD_RESPONSE, "openai: the stream ended without a chunk")
        raw = [
            (name, call_id, "".join(fragments))
            for _, (name, call_id, fragments) in sorted(self.calls.items())
        ]
        text = "".join(self.text)
        return reply(text, raw, self.usage, self.finish_reason, tool_call_format, self.said)
