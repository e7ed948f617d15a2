"""Model callbacks for tests: replay a script, wrap a function, or echo the user."""

from __future__ import annotations

import inspect
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeAlias

from praxo_actors.models import (
    Message,
    ModelError,
    Request,
    Response,
    TextBlock,
    ToolCall,
    message_assistant,
)

__all__ = [
    "EchoModel",
    "FunctionModel",
    "ModelReply",
    "ScriptExhaustedError",
    "ScriptItem",
    "ScriptedModel",
    "to_reply",
]

ModelReply: TypeAlias = Response | ModelError
"""What a model callback returns."""

ScriptItem: TypeAlias = Response | ModelError | Message | str | ToolCall | Sequence[ToolCall]
"""A scripted turn: a reply as is, an assistant message, its text, or the tool calls it makes."""


class ScriptExhaustedError(AssertionError):
    """A :class:`ScriptedModel` was called after its last scripted reply.

    An ``AssertionError`` because it means the test's script and the code under test
    disagree; raised from the model callback, it propagates out of the run unchanged.
    """


def to_reply(item: ScriptItem) -> ModelReply:
    """Return the model reply a script item stands for.

    A ``str`` becomes an assistant message with that text; a ``ToolCall`` or a non-empty
    sequence of them an assistant message (empty text) making those calls; a ``Message``
    a response carrying it; a ``Response`` or ``ModelError`` is returned as is.

    Raises:
        TypeError: ``item`` is none of these.
    """
    if isinstance(item, Response | ModelError):
        return item
    if isinstance(item, str):
        return Response(message_assistant(item))
    if isinstance(item, Message):
        return Response(item)
    if isinstance(item, ToolCall):
        return Response(message_assistant("", [item]))
    if isinstance(item, list | tuple) and item and all(isinstance(call, ToolCall) for call in item):
        return Response(message_assistant("", list(item)))
    raise TypeError(f"not a script item: {item!r}")


class _RecordingModel:
    """A model callback that records every request; ``acall`` is its ``async def`` twin."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        """Every request received, in order."""

    def __call__(self, request: Request) -> ModelReply:
        """Record ``request`` and return the reply (pass this to ``run_agent``)."""
        with self._lock:
            self.requests.append(request)
        return self._reply(request)

    async def acall(self, request: Request) -> ModelReply:
        """Record ``request`` and return the reply (pass ``model.acall`` to ``arun_agent``)."""
        return self(request)

    def _reply(self, request: Request) -> ModelReply:
        raise NotImplementedError


class ScriptedModel(_RecordingModel):
    """Replay a fixed list of replies, one per model call.

    Args:
        script: The replies in order (see :func:`to_reply` for what an item may be); checked
            when the model is built.

    Raises:
        TypeError: A script item is not one of the accepted kinds.
    """

    def __init__(self, script: Iterable[ScriptItem]) -> None:
        super().__init__()
        self._script = deque(to_reply(item) for item in script)
        self._used = 0

    @property
    def remaining(self) -> int:
        """The number of replies not yet given."""
        return len(self._script)

    def _reply(self, request: Request) -> ModelReply:
        with self._lock:
            if self._script:
                self._used += 1
                return self._script.popleft()
        raise ScriptExhaustedError(
            f"ScriptedModel has no reply left: all {self._used} were used "
            f"(run {request.run_id!r}, step {request.step})"
        )


class FunctionModel(_RecordingModel):
    """Answer each request with ``fn(request)``, sync or ``async def``.

    ``fn`` may return anything :func:`to_reply` accepts (any other return raises
    ``TypeError``). An ``async`` ``fn`` must be called through ``acall`` (under ``arun_agent``).
    """

    def __init__(self, fn: Callable[[Request], Any]) -> None:
        super().__init__()
        self.fn = fn

    def _reply(self, request: Request) -> ModelReply:
        result = self.fn(request)
        if inspect.isawaitable(result):
            _discard(result)
            raise TypeError("FunctionModel wraps an async function: pass `model.acall`")
        return to_reply(result)

    async def acall(self, request: Request) -> ModelReply:
        """Record ``request`` and return ``fn``'s reply, awaiting it when it is awaitable."""
        with self._lock:
            self.requests.append(request)
        result = self.fn(request)
        if inspect.isawaitable(result):
            result = await result
        return to_reply(result)


class EchoModel(_RecordingModel):
    """Answer with the text of the last user message (``""`` when there is none)."""

    def _reply(self, request: Request) -> ModelReply:
        for message in reversed(request.messages):
            if message.role == "user":
                return Response(message_assistant(_text(message)))
        return Response(message_assistant(""))


def _text(message: Message) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(block.text for block in message.content if isinstance(block, TextBlock))


def _discard(result: Awaitable[Any]) -> None:
    # Closing an unawaited coroutine avoids a "never awaited" RuntimeWarning.
    close = getattr(result, "close", None)
    if close is not None:
        close()
