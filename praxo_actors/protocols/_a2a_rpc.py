"""The A2A JSON-RPC endpoint: ``POST`` a request, get its answer as JSON or as a stream.

It speaks the binding the a2a-sdk's client speaks (protocol 1.0: ``SendMessage``,
``SendStreamingMessage``, ``GetTask``, ``CancelTask``, ``SubscribeToTask``), its requests read
into structs mirroring their JSON (unknown members ignored, as the SDK's server does) and its
answers encoded from the tasks' documents. Errors are JSON-RPC errors with the SDK's codes
and ``google.rpc.ErrorInfo`` details; input that is not JSON-RPC says its code there too
(``PROTOCOL_BAD_JSON``...), a body over the limit is 413 ``PROTOCOL_TOO_LARGE``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, TypeVar

import msgspec

from praxo_actors._errors import PraxoError
from praxo_actors.codes import (
    PROTOCOL_BAD_JSON,
    PROTOCOL_INVALID_INPUT,
    PROTOCOL_TASK_NOT_CANCELABLE,
    PROTOCOL_TASK_NOT_FOUND,
    PROTOCOL_TOO_LARGE,
    PROTOCOL_UNSUPPORTED,
    PROTOCOL_VERSION_NOT_SUPPORTED,
)
from praxo_actors.protocols._a2a_tasks import (
    ENDED,
    INPUT_REQUIRED,
    TERMINAL,
    A2ATask,
    Runner,
    Tasks,
)
from praxo_actors.protocols._http import MAX_BODY, EventStream
from praxo_actors.protocols._runtimes import NOT_ON_CLUSTER

__all__ = ["Endpoint"]

_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_JSON = [(b"content-type", b"application/json")]
_SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
_ROLES = {"ROLE_USER": "ROLE_USER", "ROLE_AGENT": "ROLE_AGENT", 1: "ROLE_USER", 2: "ROLE_AGENT"}
_UNSUPPORTED = frozenset(
    {
        "ListTasks",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
    }
)
T = TypeVar("T")
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


class RpcError(PraxoError):
    """A JSON-RPC error: its JSON-RPC code, the ErrorInfo reason, and the HTTP status."""

    def __init__(self, code: str, rpc: int, reason: str, message: str, status: int = 200) -> None:
        super().__init__(code, message)
        self.rpc, self.reason, self.status = rpc, reason, status


def _bad_json(message: str, rpc: int = -32600, reason: str = "INVALID_REQUEST") -> RpcError:
    return RpcError(PROTOCOL_BAD_JSON, rpc, reason, message, 400)


def _invalid_params(message: str) -> RpcError:
    return RpcError(PROTOCOL_INVALID_INPUT, -32602, "INVALID_PARAMS", message, 400)


def _unsupported(message: str) -> RpcError:
    return RpcError(PROTOCOL_UNSUPPORTED, -32004, "UNSUPPORTED_OPERATION", message)


def _not_found(message: str = "Task not found") -> RpcError:
    return RpcError(PROTOCOL_TASK_NOT_FOUND, -32001, "TASK_NOT_FOUND", message)


class Part(msgspec.Struct, rename="camel", omit_defaults=True):
    """A message's part: text, data (any JSON), a file's bytes or URL."""

    text: str | msgspec.UnsetType = msgspec.UNSET
    raw: str | msgspec.UnsetType = msgspec.UNSET
    url: str | msgspec.UnsetType = msgspec.UNSET
    data: Any = msgspec.UNSET
    metadata: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    filename: str = ""
    media_type: str = ""


class Message(msgspec.Struct, rename="camel"):
    """A client's message."""

    message_id: str = ""
    context_id: str = ""
    task_id: str = ""
    role: str | int = 0
    parts: list[Part] = []
    metadata: dict[str, Any] | None = None
    extensions: list[str] = []
    reference_task_ids: list[str] = []


class Configuration(msgspec.Struct, rename="camel"):
    return_immediately: bool = False
    history_length: int | None = None


class SendParams(msgspec.Struct, rename="camel"):
    message: Message | None = None
    configuration: Configuration | None = None


class TaskParams(msgspec.Struct, rename="camel"):
    id: str = ""
    history_length: int | None = None


class Endpoint:
    """The ASGI endpoint answering JSON-RPC ``POST``s for one agent's tasks."""

    def __init__(self, tasks: Tasks, runner: Runner) -> None:
        self._tasks = tasks
        self._runner = runner

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Answer one request."""
        request_id: Any = None
        try:
            body = await _body(receive)
            if body is None:  # the client left
                return
            doc = _parse(body)
            request_id = _request_id(doc)
            answer = await self._dispatch(doc, scope)
        except RpcError as exc:
            await _reply(send, exc.status, _error(request_id, exc))
            return
        if isinstance(answer, dict):
            await _reply(send, 200, {"jsonrpc": "2.0", "id": request_id, "result": answer})
            return
        frames = _frames(answer.events(), request_id)
        try:
            await EventStream(frames, media_type="text/event-stream", headers=_SSE_HEADERS)(
                scope, receive, send
            )
        finally:
            answer.close()  # also when the stream never started

    async def _dispatch(self, doc: dict[str, Any], scope: Any) -> Any:
        method = doc.get("method")
        if not isinstance(method, str) or not method:
            raise _bad_json("Method is required")
        params = doc.get("params", {})
        if not isinstance(params, dict):
            raise _invalid_params("params must be an object")
        if method in ("SendMessage", "SendStreamingMessage"):
            given = _convert(params, SendParams)
            _check_version(scope)
            return await self._send(given, streaming=method == "SendStreamingMessage")
        if method in ("GetTask", "CancelTask", "SubscribeToTask"):
            query = _convert(params, TaskParams)
            _check_version(scope)
            task = await self._find(query.id)
            if task is None:
                raise _not_found()
            if method == "GetTask":
                return task.doc(query.history_length)
            if method == "CancelTask":
                if task.state in TERMINAL:
                    message = f"Task cannot be canceled - current state: {task.state}"
                    raise RpcError(
                        PROTOCOL_TASK_NOT_CANCELABLE, -32002, "TASK_NOT_CANCELABLE", message
                    )
                if task.running is not None and self._runner.on_cluster:
                    message = "a run in flight on a cluster cannot be cancelled: it goes on"
                    raise RpcError(NOT_ON_CLUSTER, -32002, "TASK_NOT_CANCELABLE", message)
                self._runner.cancel(task)
                return task.doc()
            if task.state in ENDED:
                raise _unsupported(f"Task {task.id} is in state {task.state}")
            return _Follow(task, first=True)
        if method in _UNSUPPORTED:
            raise _unsupported(f"Method {method} is not supported.")
        raise RpcError(PROTOCOL_INVALID_INPUT, -32601, "METHOD_NOT_FOUND", "Method not found", 400)

    async def _find(self, task_id: str) -> A2ATask | None:
        """The task of id ``task_id``: remembered, else found again from the runtime."""
        task = self._tasks.get(task_id)
        if task is not None:
            return task
        try:
            return await self._runner.recover(task_id)
        except PraxoError as exc:
            raise RpcError(exc.code, -32603, "INTERNAL_ERROR", exc.message) from None

    async def _send(self, given: SendParams, streaming: bool) -> Any:
        message = given.message
        if message is None:
            raise _invalid_params("message is required")
        config = given.configuration or Configuration()
        if message.task_id:
            task = await self._find(message.task_id)
            if task is None:
                raise _not_found(f"Task {message.task_id} was specified but does not exist")
            if message.context_id and message.context_id != task.context_id:
                raise _invalid_params("the message's contextId is not its task's")
            if task.state in TERMINAL:
                raise _unsupported(f"Task {task.id} is in terminal state: {task.state}")
            if task.state != INPUT_REQUIRED:
                raise _unsupported(f"Task {task.id} is running: it takes no message now")
            asked = task.add_message(_message_doc(message, task.id, task.context_id))
            events = _Follow(task, first=False) if streaming else None
            self._runner.resume(task, _answer(message), asked)
        else:
            context_id = message.context_id or str(uuid.uuid4())
            task = await self._runner.start(
                context_id,
                _text(message),
                lambda task_id: _message_doc(message, task_id, context_id),
            )
            events = _Follow(task, first=True) if streaming else None
        if events is not None:
            return events
        running = task.running
        if running is not None and not config.return_immediately:
            await asyncio.wait((running,))
        return {"task": task.doc(config.history_length)}


class _Follow:
    """A task's events from now (the task first, if ``first``) until its run stops (ended,
    or waiting for input)."""

    def __init__(self, task: A2ATask, first: bool) -> None:
        self._task = task
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        task.listeners.append(self._queue)  # now: nothing published from here on is missed
        self._start = {"task": task.doc()} if first else None
        self._ended = first and task.state in ENDED  # refused before its run: nothing follows

    def close(self) -> None:
        """Stop listening (idempotent)."""
        if self._queue in self._task.listeners:
            self._task.listeners.remove(self._queue)

    async def events(self) -> AsyncGenerator[dict[str, Any], None]:
        """Yield the events."""
        try:
            if self._start is not None:
                yield self._start
            if self._ended:
                return
            while True:
                event = await self._queue.get()
                yield event
                update = event.get("statusUpdate")
                if update is not None and update["status"]["state"] in ENDED:
                    return
        finally:
            self.close()


async def _frames(
    events: AsyncGenerator[dict[str, Any], None], request_id: Any
) -> AsyncIterator[bytes]:
    """The server-sent events of a stream's answers."""
    try:
        async for event in events:
            doc = {"jsonrpc": "2.0", "id": request_id, "result": event}
            yield b"data: " + _encode(doc) + b"\r\n\r\n"
    finally:
        await events.aclose()


async def _body(receive: Any) -> bytes | None:
    """Return the request's body (None if the client left)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            message = f"the body is over {MAX_BODY} bytes"
            raise RpcError(PROTOCOL_TOO_LARGE, -32600, "INVALID_REQUEST", message, 413)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _parse(body: bytes) -> dict[str, Any]:
    try:
        doc = _decode(body)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise _bad_json(f"the body is not JSON: {exc}", -32700, "PARSE_ERROR") from None
    if not isinstance(doc, dict):
        message = "a request is one JSON-RPC object (batches are not supported)"
        raise _bad_json(message)
    return doc


def _request_id(doc: dict[str, Any]) -> Any:
    request_id = doc.get("id")
    if request_id is not None and (
        isinstance(request_id, bool) or not isinstance(request_id, str | int)
    ):
        raise _bad_json("Invalid request: id must be a string, integer, or null")
    if doc.get("jsonrpc") != "2.0":
        raise _bad_json("Invalid request: 'jsonrpc' must be exactly '2.0'")
    return request_id


def _convert(params: dict[str, Any], kind: type[T]) -> T:
    try:
        return msgspec.convert(params, kind)
    except msgspec.ValidationError as exc:
        raise _invalid_params(f"Invalid params: {exc}") from None


def _check_version(scope: Any) -> None:
    """Refuse a client of another major version of the protocol than 1 (none given: 0.3)."""
    version = "0.3"
    for key, value in scope["headers"]:
        if key == b"a2a-version":
            version = value.decode("latin-1").strip() or "0.3"
            break
    if version.split(".", 1)[0] != "1":
        message = (
            f"A2A version '{version}' is not supported by this handler. Expected version '1.0'."
        )
        raise RpcError(PROTOCOL_VERSION_NOT_SUPPORTED, -32009, "VERSION_NOT_SUPPORTED", message)


def _error(request_id: Any, exc: RpcError) -> dict[str, Any]:
    info = {
        "@type": _ERROR_INFO,
        "reason": exc.reason,
        "domain": "a2a-protocol.org",
        "metadata": {"praxo.code": exc.code},
    }
    error = {"code": exc.rpc, "message": exc.message, "data": [info]}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


async def _reply(send: Any, status: int, doc: dict[str, Any]) -> None:
    body = _encode(doc)
    headers = [*_JSON, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _message_doc(message: Message, task_id: str, context_id: str) -> dict[str, Any]:
    """The client's message as its task keeps it (its task's and context's ids set)."""
    doc: dict[str, Any] = {}
    if message.message_id:
        doc["messageId"] = message.message_id
    doc["contextId"] = context_id
    doc["taskId"] = task_id
    role = _ROLES.get(message.role)
    if role is not None:
        doc["role"] = role
    doc["parts"] = message.parts
    if message.metadata:
        doc["metadata"] = message.metadata
    if message.extensions:
        doc["extensions"] = message.extensions
    if message.reference_task_ids:
        doc["referenceTaskIds"] = message.reference_task_ids
    return doc


def _text(message: Message) -> str:
    """The message's text (its text parts, joined)."""
    return "\n".join(p.text for p in message.parts if isinstance(p.text, str))


def _answer(message: Message) -> Any:
    """What a message answers an interrupt with: its data, its JSON text, or its text."""
    for part in message.parts:
        if part.data is not msgspec.UNSET:
            return part.data
    text = _text(message)
    try:
        return _decode(text.encode("utf-8", "surrogatepass"))
    except (msgspec.DecodeError, RecursionError):
        return text
