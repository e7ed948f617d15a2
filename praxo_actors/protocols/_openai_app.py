"""The OpenAI-compatible app: ``POST /v1/chat/completions`` and ``GET /v1/models``.

Built by :func:`praxo_actors.protocols.openai_app` (imported then: it needs Starlette, the
``protocols`` extra).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.agent import AgentOptions, new_run_id
from praxo_actors.codes import (
    AGENT_CALLBACK_EXCEPTION,
    PROTOCOL_INVALID_INPUT,
    PROTOCOL_RUN_INTERRUPTED,
)
from praxo_actors.models import Message, RunResult, ToolCall
from praxo_actors.protocols._agents import agent_names, derive
from praxo_actors.protocols._http import EventStream, HostCheck, Refused, read_json
from praxo_actors.protocols._runtimes import NOT_ON_CLUSTER, on_cluster
from praxo_actors.protocols._seeded import seeded

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime, SessionHandle

__all__ = ["build"]

SESSION_HEADER = "x-praxo-session"
_STATUS = {
    "RUNTIME_INVALID_INPUT": 400,
    "RUNTIME_UNKNOWN_AGENT": 404,
    "SESSION_BUSY": 409,
    "SESSION_INTERRUPTED": 409,
    "PROTOCOL_RUN_INTERRUPTED": 409,
    "SESSION_OVERLOADED": 429,
    "RUNTIME_SESSION_LIMIT": 429,
    "RUNTIME_STOPPED": 503,
}
_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
_encode = msgspec.json.Encoder().encode


class _Chat(msgspec.Struct, frozen=True):
    """What a chat completion request says that the app reads."""

    agent: str
    input: str
    earlier: list[Message]
    session: str | None
    stream: bool
    usage: bool


def build(runtime: Runtime, allowed_hosts: Iterable[str] | None) -> HostCheck:
    """Return the OpenAI-compatible app over ``runtime``'s agents."""
    seeds: dict[str, list[Message]] = {}
    key = f"openai-seeded:{id(seeds)}"
    cluster = on_cluster(runtime)

    def seeding(options: AgentOptions) -> AgentOptions:
        return dataclasses.replace(options, model=seeded(options.model, seeds))

    async def models(_request: Request) -> Response:
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "praxo-actors"}
            for name in agent_names(runtime)
        ]
        return JSONResponse({"object": "list", "data": data})

    async def completions(request: Request) -> Response:
        try:
            chat = _chat(await read_json(request), request.headers.get(SESSION_HEADER))
            if chat.session is None and chat.earlier and cluster:
                raise _on_cluster()
            if chat.session is None:
                session = f"openai-{new_run_id()}"
                name = derive(runtime, chat.agent, key, seeding) if chat.earlier else chat.agent
                handle = runtime.session(session, name)
            else:
                handle = runtime.session(chat.session, chat.agent)
        except PraxoError as exc:
            return _error(exc)
        if chat.session is None and chat.earlier:
            seeds[handle.id] = chat.earlier
        headers = {"X-Praxo-Session": handle.id}
        if chat.stream:
            chunks = _chunks(handle, chat, seeds)
            return EventStream(chunks, media_type="text/event-stream", headers=headers)
        try:
            result = await handle.arun(chat.input)
        except Exception as exc:
            return _error(_failure(exc))
        finally:
            seeds.pop(handle.id, None)
        if result.status != "completed":
            return _error(_interrupted())
        return Response(
            _encode(_completion(chat.agent, result)), headers=headers, media_type="application/json"
        )

    app = Starlette(
        routes=[
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/chat/completions", completions, methods=["POST"]),
        ]
    )
    return HostCheck(app, allowed_hosts)


def _chat(doc: Any, header: str | None) -> _Chat:
    """Read a chat completion request.

    Raises:
        Refused: 400 ``PROTOCOL_INVALID_INPUT`` for a request of the wrong shape.
    """
    if not isinstance(doc, dict):
        raise _invalid("the body must be a JSON object", None)
    agent = doc.get("model")
    if not isinstance(agent, str) or not agent:
        raise _invalid("model must name an agent", "model")
    messages = doc.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _invalid("messages must be a non-empty array", "messages")
    read = [_message(m, i) for i, m in enumerate(messages)]
    last = read[-1]
    if last.role != "user":
        raise _invalid("the last message must be the user's", "messages")
    stream = doc.get("stream", False)
    if not isinstance(stream, bool):
        raise _invalid("stream must be a boolean", "stream")
    options = doc.get("stream_options")
    usage = isinstance(options, dict) and options.get("include_usage") is True
    user = doc.get("user")
    if user is not None and not isinstance(user, str):
        raise _invalid("user must be a string", "user")
    session = header or user or None
    return _Chat(agent, str(last.content), read[:-1], session, stream, usage)


def _message(doc: Any, index: int) -> Message:
    where = f"messages[{index}]"
    if not isinstance(doc, dict):
        raise _invalid(f"{where} must be an object", where)
    role = doc.get("role")
    content = _content(doc.get("content"), where)
    if role == "tool":
        call_id = doc.get("tool_call_id")
        if not isinstance(call_id, str):
            raise _invalid(f"{where}.tool_call_id must be a string", where)
        return Message(role="tool", content=content, tool_call_id=call_id)
    if role not in _ROLES:
        raise _invalid(f"{where}.role must be system, developer, user, assistant or tool", where)
    calls = [_call(c, where) for c in doc.get("tool_calls") or ()] if role == "assistant" else []
    return Message(role=_ROLES[role], content=content, tool_calls=calls)  # type: ignore[arg-type]


def _content(value: Any, where: str) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list):
        texts = [p.get("text") for p in value if isinstance(p, dict) and p.get("type") == "text"]
        if all(isinstance(t, str) for t in texts):
            return "\n".join(str(t) for t in texts)
    raise _invalid(f"{where}.content must be a string or text parts", where)


def _call(doc: Any, where: str) -> ToolCall:
    function = doc.get("function") if isinstance(doc, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise _invalid(f"{where}.tool_calls holds a call without a function name", where)
    try:
        arguments = msgspec.json.decode(function.get("arguments") or "{}")
    except (msgspec.DecodeError, RecursionError, TypeError):
        arguments = None
    if not isinstance(arguments, dict):
        raise _invalid(f"{where}.tool_calls holds arguments that are not a JSON object", where)
    call_id = doc.get("id")
    return ToolCall(function["name"], arguments, call_id if isinstance(call_id, str) else None)


def _invalid(message: str, param: str | None) -> Refused:
    refused = Refused(400, PROTOCOL_INVALID_INPUT, message)
    refused.param = param  # type: ignore[attr-defined]
    return refused


def _on_cluster() -> Refused:
    refused = Refused(
        400,
        NOT_ON_CLUSTER,
        "on a cluster, earlier messages need a session: name one (X-Praxo-Session or user)"
        " and send only the new message",
    )
    refused.param = "messages"  # type: ignore[attr-defined]
    return refused


def _interrupted() -> PraxoError:
    return PraxoError(
        PROTOCOL_RUN_INTERRUPTED,
        "the run waits for a person (an approval or a tool's question): answer it through the"
        " runtime, then go on",
    )


def _failure(exc: Exception) -> PraxoError:
    """Return the run's failure as a ``PraxoError`` (a callback's own exception: its type)."""
    if isinstance(exc, PraxoError):
        return exc
    return AgentError(AGENT_CALLBACK_EXCEPTION, f"{type(exc).__name__}: {exc}")


def _error_doc(exc: PraxoError) -> tuple[int, dict[str, Any]]:
    status = exc.status if isinstance(exc, Refused) else _STATUS.get(exc.code, 500)
    kind = "invalid_request_error" if status < 500 else "server_error"
    param = getattr(exc, "param", None)
    error = {"message": exc.message, "type": kind, "param": param, "code": exc.code}
    return status, {"error": error}


def _error(exc: PraxoError) -> Response:
    status, doc = _error_doc(exc)
    # A failed run is not retried by the client: running it again would repeat its effects.
    headers = {"x-should-retry": "false"} if status >= 500 else None
    return Response(
        _encode(doc), status_code=status, headers=headers, media_type="application/json"
    )


def _usage(usage: dict[str, int]) -> dict[str, int]:
    prompt = int(usage.get("input_tokens", 0))
    completion = int(usage.get("output_tokens", 0))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion(agent: str, result: RunResult) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{result.run_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": agent,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": result.output},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(result.usage),
    }


async def _chunks(
    handle: SessionHandle, chat: _Chat, seeds: dict[str, list[Message]]
) -> AsyncIterator[bytes]:
    """Yield the run's answer as ``chat.completion.chunk`` server-sent events."""
    created = int(time.time())
    base = {
        "id": f"chatcmpl-{new_run_id()}",
        "object": "chat.completion.chunk",
        "created": created,
        "model": chat.agent,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return b"data: " + _encode({**base, "choices": [choice]}) + b"\n\n"

    try:
        yield chunk({"role": "assistant", "content": ""})
        try:
            # The answer is the run's output, known at its end: the text of a step is not
            # the answer's until the step turns out to call no tool (a call read from the
            # text included). Without a subscriber the run builds no events at all.
            result = await handle.arun(chat.input)
            if result.status != "completed":
                raise _interrupted()
        except Exception as exc:
            yield b"data: " + _encode(_error_doc(_failure(exc))[1]) + b"\n\n"
            return
        if result.output:
            yield chunk({"content": result.output})
        yield chunk({}, "stop")
        if chat.usage:
            doc = {**base, "choices": [], "usage": _usage(result.usage)}
            yield b"data: " + _encode(doc) + b"\n\n"
        yield b"data: [DONE]\n\n"
    finally:
        seeds.pop(handle.id, None)
