"""What the provider tests send and expect: protocol payloads, requests, a virtual clock."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

from praxo_actors.models import Request, ToolSpec, message_user


class VirtualClock:
    """A clock whose waits move virtual time at once and are recorded."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def monotonic(self) -> float:
        with self._lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)
        await asyncio.sleep(0)


LOOK = ToolSpec(
    "look", "Look something up.", {"type": "object", "properties": {"q": {"type": "string"}}}
)


def request(*messages: Any, tools: tuple[ToolSpec, ...] = (LOOK,)) -> Request:
    """Return a request of ``messages`` (default: one user message) advertising ``tools``."""
    return Request(list(messages) or [message_user("hi")], list(tools), "run_1", "s1", 1)


def completion(
    text: str | None = "hello",
    calls: list[dict[str, Any]] | None = None,
    *,
    finish_reason: str = "stop",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Return an OpenAI chat completion body."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": usage or {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def function_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """Return an OpenAI tool call as a completion carries it."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def chunk(
    delta: dict[str, Any] | None = None, finish_reason: str | None = None, **extra: Any
) -> Any:
    """Return one OpenAI stream chunk (no choice when ``delta`` is None)."""
    choices = (
        [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    )
    return (
        None,
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": choices,
            **extra,
        },
    )


def message(
    content: list[dict[str, Any]], stop_reason: str = "end_turn", **usage: int
) -> dict[str, Any]:
    """Return an Anthropic Messages API message body."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 13, "output_tokens": 5},
    }


def event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    """Return one Anthropic stream event."""
    return kind, {"type": kind, **fields}


class Deltas:
    """A model context recording deltas, optionally setting an event at the first one."""

    def __init__(self, first: threading.Event | None = None) -> None:
        self.texts: list[str] = []
        self.first = first

    def __call__(self, _type: str, data: dict[str, Any]) -> Any:
        self.texts.append(data["text"])
        if self.first is not None:
            self.first.set()
        return _Emit()


class _Emit:
    event = None

    @staticmethod
    def sink(_event: Any) -> None:
        return None


@contextlib.contextmanager
def bound_port() -> Iterator[int]:
    """Bind a loopback port for the block and yield its number (free again after it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def stream_of(*blocks: list[tuple[str, dict[str, Any]]], stop: str = "end_turn") -> list[Any]:
    """Return a whole message stream around the blocks' events."""
    start = message([], input_tokens=21, output_tokens=1)
    events: list[Any] = [event("message_start", message=start), event("ping")]
    for block in blocks:
        events.extend(block)
    events.append(
        event(
            "message_delta",
            delta={"stop_reason": stop, "stop_sequence": None},
            usage={"output_tokens": 9},
        )
    )
    events.append(event("message_stop"))
    return events


def text_block(index: int, *pieces: str) -> list[tuple[str, dict[str, Any]]]:
    """Return the events of a streamed text block."""
    return [
        event("content_block_start", index=index, content_block={"type": "text", "text": ""}),
        *(
            event("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
            for p in pieces
        ),
        event("content_block_stop", index=index),
    ]


def tool_block(index: int, call_id: str, name: str, *pieces: str) -> list[tuple[str, Any]]:
    """Return the events of a streamed tool_use block."""
    start = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return [
        event("content_block_start", index=index, content_block=start),
        *(
            event(
                "content_block_delta",
                index=index,
                delta={"type": "input_json_delta", "partial_json": p},
            )
            for p in pieces
        ),
        event("content_block_stop", index=index),
    ]
