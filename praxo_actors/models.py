"""The msgspec data model shared by the Core, the agent loop and the runtime."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = [
    "Block",
    "Event",
    "ImageBlock",
    "Message",
    "ModelError",
    "Request",
    "Response",
    "Role",
    "RunResult",
    "Session",
    "TextBlock",
    "ToolCall",
    "ToolSpec",
    "message_assistant",
    "message_system",
    "message_tool",
    "message_user",
    "response",
    "session",
]

Role = Literal["system", "user", "assistant", "tool"]


class TextBlock(msgspec.Struct, frozen=True, tag="text"):
    """A text content block."""

    text: str


class ImageBlock(msgspec.Struct, frozen=True, tag="image"):
    """An image content block (the example non-text block)."""

    url: str
    media_type: str | None = None


Block = TextBlock | ImageBlock


class ToolCall(msgspec.Struct, frozen=True):
    """A model's request to invoke a tool."""

    name: str
    arguments: dict[str, Any]
    id: str | None = None


class Message(msgspec.Struct, frozen=True):
    """One conversation message."""

    role: Role
    content: str | list[Block] = ""
    tool_calls: list[ToolCall] = msgspec.field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool as advertised to the model."""

    name: str
    description: str
    parameters: dict[str, Any]


class Request(msgspec.Struct, frozen=True):
    """What the agent loop sends to a model callback on each step."""

    messages: list[Message]
    tools: list[ToolSpec]
    run_id: str
    session_id: str
    step: int


class Response(msgspec.Struct, frozen=True):
    """A model's successful answer.

    ``finish_reason``, ``id`` and ``model`` are what the server said of it (why it stopped,
    e.g. ``"stop"`` or ``"length"``; the completion's id; the model that answered), when it
    said so: telemetry records them, the loop does not read them.
    """

    message: Message
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None
    id: str | None = None
    model: str | None = None


class ModelError(msgspec.Struct, frozen=True):
    """A model's expected failure, returned (not raised) by a model callback."""

    code: str
    message: str = ""


class Session(msgspec.Struct, frozen=True):
    """A conversation: its id, messages and free-form metadata."""

    id: str
    messages: list[Message] = msgspec.field(default_factory=list)
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)


class Event(msgspec.Struct, frozen=True):
    """Something that happened during a run; ``seq`` counts 0, 1, 2… per run."""

    type: str
    run_id: str
    session_id: str
    seq: int
    time_ns: int
    data: dict[str, Any] = msgspec.field(default_factory=dict)


class RunResult(msgspec.Struct, frozen=True):
    """The outcome of a run that completed, or stopped to ask a person.

    ``usage`` sums the integer counters (e.g. tokens) of every model response of the run.
    ``status`` is ``"completed"``, or ``"interrupted"`` when a tool returned an ``Interrupt``
    or a call waits for approval: then ``interrupt`` is its payload, ``output`` is empty, and
    ``session`` holds the run so far and its pending state (resume it to go on).
    """

    run_id: str
    session: Session
    output: str
    structured: Any = None
    steps: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    usage: dict[str, int] = msgspec.field(default_factory=dict)
    status: str = "completed"
    interrupt: Any = None


def session(id: str) -> Session:
    """Return an empty session with the given id."""
    return Session(id=id)


def message_user(text: str) -> Message:
    """Return a user message."""
    return Message(role="user", content=text)


def message_system(text: str) -> Message:
    """Return a system message."""
    return Message(role="system", content=text)


def message_assistant(text: str, tool_calls: list[ToolCall] | tuple[ToolCall, ...] = ()) -> Message:
    """Return an assistant message, optionally carrying tool calls."""
    return Message(role="assistant", content=text, tool_calls=list(tool_calls))


def message_tool(call_id: str | None, name: str, content: str) -> Message:
    """Return a tool-result message answering the call ``call_id``."""
    return Message(role="tool", content=content, tool_call_id=call_id, name=name)


def response(message: Message) -> Response:
    """Return a successful model response carrying ``message``."""
    return Response(message=message)
