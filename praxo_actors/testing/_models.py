"""Model callbacks for tests: replay a script, wrap a function, or echo the user."""

from __future__ import annotations

import inspect
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Generic, TypeAlias, TypeVar

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
    "PerSessionModel",
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

    One ``ScriptedModel`` is one script, whoever calls it. A runtime builds an agent's options
    once (``register_agent`` without ``per_session``), so every session of the runtime calls the
    same model and the sessions consume one shared script, in whatever order their calls come.
    For a script of its own in each session, use :meth:`per_session` (or register the agent
    with ``per_session=True`` and a factory that builds a new ``ScriptedModel``).

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

    @classmethod
    def per_session(cls, script: Iterable[ScriptItem]) -> PerSessionModel[ScriptedModel]:
        """Return a model that replays ``script`` from its start in each session.

        The first request of a session (``request.session_id``) gets a fresh
        ``ScriptedModel(script)``; :meth:`PerSessionModel.model` returns it.

        Raises:
            TypeError: A script item is not one of the accepted kinds (checked here).
        """
        replies = [to_reply(item) for item in script]
        return PerSessionModel(lambda _session_id: cls(replies))

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

    @classmethod
    def per_session(
        cls, make: Callable[[str], Callable[[Request], Any]]
    ) -> PerSessionModel[FunctionModel]:
        """Return a model that answers each session with a function of its own.

        The first request of a session calls ``make(session_id)`` for that session's function
        (so state it closes over belongs to one session) and wraps it in a ``FunctionModel``.
        """
        return PerSessionModel(lambda session_id: cls(make(session_id)))

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


M = TypeVar("M", bound=_RecordingModel)


class PerSessionModel(Generic[M]):
    """A model callback holding one model per session, built on its session's first request.

    ``make(session_id)`` builds the model of a session the first time a request of that
    session (``request.session_id``) comes; every later request of the session goes to it. A
    session's child sessions (``agent_tool``) are sessions of their own. Use it where one
    model serves many sessions, e.g. the options of a runtime's agent; build it with
    :meth:`ScriptedModel.per_session` or :meth:`FunctionModel.per_session`.
    """

    def __init__(self, make: Callable[[str], M]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._models: dict[str, M] = {}
        self.requests: list[Request] = []
        """Every request received, in order, whichever its session."""

    def model(self, session_id: str) -> M:
        """Return the model of session ``session_id``.

        Raises:
            KeyError: No request of that session has come yet.
        """
        with self._lock:
            return self._models[session_id]

    @property
    def sessions(self) -> list[str]:
        """The sessions that have a model, in the order of their first request."""
        with self._lock:
            return list(self._models)

    def _for(self, request: Request) -> M:
        with self._lock:
            self.requests.append(request)
            found = self._models.get(request.session_id)
            if found is None:
                found = self._models[request.session_id] = self._make(request.session_id)
            return found

    def __call__(self, request: Request) -> ModelReply:
        """Answer ``request`` with its session's model (pass this to ``run_agent``)."""
        return self._for(request)(request)

    async def acall(self, request: Request) -> ModelReply:
        """Answer ``request`` with its session's model's ``acall`` (for ``arun_agent``)."""
        return await self._for(request).acall(request)


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
