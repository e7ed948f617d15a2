"""Messages and tools to Anthropic Messages API JSON, and a message (or its stream) back.

The API takes the system prompt apart from the turns, tool calls as ``tool_use`` blocks of an
assistant turn, and their results as ``tool_result`` blocks of the next user turn; turns of
one role in a row are merged into one (consecutive tool results become one user turn, with
any user text after them), as the API requires.
"""

from __future__ import annotations

from typing import Any

from praxo_actors._errors import ToolCallError
from praxo_actors.models import ImageBlock, Message, ModelError, Response, ToolSpec
from praxo_actors.providers._errors import MODEL_BAD_RESPONSE
from praxo_actors.providers._telemetry import text_or_none
from praxo_actors.providers._wire import BadRequest, decode_arguments, pair_calls, text_of, typed

__all__ = ["Assembler", "from_message", "to_messages", "to_tools", "usage_of"]

_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def to_messages(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """Return the system prompt (system messages joined) and the turns.

    Raises:
        BadRequest: An image in a system, assistant or tool message, or a malformed data URL.
    """
    ids = pair_calls(messages)
    system: list[str] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for index, message in enumerate(messages):
        match message.role:
            case "system":
                system.append(text_of(message.content, "system"))
            case "user":
                add("user", _user_blocks(message.content))
            case "assistant":
                content, calls = ids.of(index, message)
                blocks = _text_blocks(text_of(content, "assistant"))
                for call_id, call in zip(ids.calls[index], calls, strict=True):
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": call_id,
                            "name": call.name,
                            "input": call.arguments,
                        }
                    )
                add("assistant", blocks)
            case "tool":
                text = text_of(message.content, "tool")
                answers = ids.answers[index]
                if answers is None:  # answers no call: a tool_result needs its tool_use
                    add("user", _text_blocks(text))
                else:
                    add("user", [{"type": "tool_result", "tool_use_id": answers, "content": text}])
    return ("\n\n".join(system) if system else None), turns


def _text_blocks(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}] if text else []  # the API refuses empty text


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return _text_blocks(content)
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, ImageBlock):
            blocks.append({"type": "image", "source": _image_source(block)})
        else:
            blocks.extend(_text_blocks(block.text))
    return blocks


def _image_source(block: ImageBlock) -> dict[str, Any]:
    if not block.url.startswith("data:"):
        return {"type": "url", "url": block.url}
    header, comma, data = block.url[5:].partition(",")
    media_type, _, encoding = header.partition(";")
    if not comma or encoding != "base64":
        raise BadRequest("an image data URL must be data:<media type>;base64,<data>")
    return {"type": "base64", "media_type": block.media_type or media_type, "data": data}


def to_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Return tool specs as Messages API ``tools``."""
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
        for tool in tools
    ]


def usage_of(usage: Any, into: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Return a message's integer token counts (``input_tokens``, ``output_tokens``, cache)."""
    kept = dict(into or {})
    for key in _USAGE_KEYS:
        value = getattr(usage, key, None)
        if type(value) is int:
            kept[key] = value
    return kept or None


def _reply(
    text: str,
    raw_calls: list[tuple[Any, Any, Any]],
    usage: Any,
    stop_reason: Any,
    said: Any = None,
) -> Response | ModelError:
    """Return the response of a reply; ``said`` is the message the API began its answer with
    (its id and model), if any."""
    note = " (the answer was cut at max_tokens)" if stop_reason == "max_tokens" else ""
    try:
        calls = [decode_arguments(name, call_id, args, note) for name, call_id, args in raw_calls]
    except ToolCallError as exc:
        return ModelError(exc.code, f"anthropic: {exc.message}")
    return Response(
        Message(role="assistant", content=text, tool_calls=calls),
        usage=usage,
        finish_reason=text_or_none(stop_reason),
        id=text_or_none(getattr(said, "id", None)),
        model=text_or_none(getattr(said, "model", None)),
    )


def from_message(message: Any) -> Response | ModelError:
    """Return the reply of a Messages API message."""
    content = getattr(message, "content", None)
    if content is None:
        return ModelError(MODEL_BAD_RESPONSE, "anthropic: the message has no content")
    text: list[str] = []
    calls: list[tuple[Any, Any, Any]] = []
    for block in typed(content, list, "the message's content"):
        kind = typed(block.type, str, "a content block's type")  # others (thinking) are skipped
        if kind == "text":
            text.append(typed(block.text, str, "a text block's text"))
        elif kind == "tool_use":
            calls.append((block.name, typed(block.id, str, "a tool_use block's id"), block.input))
    return _reply("".join(text), calls, usage_of(message.usage), message.stop_reason, message)


class Assembler:
    """Put a streamed message back together from its events; :meth:`add` returns new text."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, list[Any]] = {}  # block index -> [name, id, JSON fragments]
        self.usage: dict[str, Any] | None = None
        self.stop_reason: Any = None
        self.said: Any = None  # the message_start event's message: its id and model
        self.started = self.stopped = False

    def add(self, event: Any) -> str:
        """Take one stream event; return the text it adds."""
        kind = typed(event.type, str, "an event's type")  # others are skipped
        if kind == "message_start":
            self.started = True
            self.said = event.message
            self.usage = usage_of(event.message.usage)
        elif kind == "content_block_start":
            block = event.content_block
            index = typed(event.index, int, "a block's index")
            if typed(block.type, str, "a content block's type") == "tool_use":
                self.calls[index] = [block.name, typed(block.id, str, "a tool_use block's id"), []]
        elif kind == "content_block_delta":
            delta = event.delta
            index = typed(event.index, int, "a block's index")
            kind = typed(delta.type, str, "a delta's type")
            if kind == "text_delta":
                text: str = typed(delta.text, str, "a text delta's text")
                self.text.append(text)
                return text
            if kind == "input_json_delta" and index in self.calls:
                self.calls[index][2].append(typed(delta.partial_json, str, "a delta's JSON"))
        elif kind == "message_delta":
            self.stop_reason = getattr(event.delta, "stop_reason", None)
            self.usage = usage_of(event.usage, self.usage)
        elif kind == "message_stop":
            self.stopped = True
        return ""

    def response(self) -> Response | ModelError:
        """Return the whole reply."""
        if not (self.started and self.stopped):
            return ModelError(MODEL_BAD_RESPONSE, "anthropic: the stream ended before message_stop")
        raw = [
            (name, call_id, "".join(fragments))
            for _, (name, call_id, fragments) in sorted(self.calls.items())
        ]
        return _reply("".join(self.text), raw, self.usage, self.stop_reason, self.said)
