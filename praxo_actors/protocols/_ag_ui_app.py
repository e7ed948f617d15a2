"""The AG-UI app: ``POST`` a ``RunAgentInput``, get the run's events as server-sent events.

Built by :func:`praxo_actors.protocols.ag_ui_app` (imported then: it needs ``ag-ui-protocol``
and Starlette, the ``protocols`` extra).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from praxo_actors._errors import PraxoError
from praxo_actors.agent import Interrupt, Tool, tool_context
from praxo_actors.codes import (
    PROTOCOL_INVALID_INPUT,
    PROTOCOL_RUN_LOST,
    PROTOCOL_TOO_MANY_TOOL_SETS,
)
from praxo_actors.models import Event
from praxo_actors.protocols._ag_ui_events import FRONTEND_TOOL, AgUiEvent, Translation
from praxo_actors.protocols._ag_ui_input import Given
from praxo_actors.protocols._ag_ui_input import given as read_given
from praxo_actors.protocols._agents import with_tools
from praxo_actors.protocols._http import (
    Door,
    EventStream,
    HostCheck,
    Refused,
    Scope,
    error_body,
    read_body,
)
from praxo_actors.protocols._runs import resumed
from praxo_actors.protocols._runtimes import on_cluster, resumed_on_cluster

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime, SessionHandle

__all__ = ["build"]

_WAIT = 10.0  # seconds a settled resumed run's last event may take to arrive
MAX_TOOL_SETS = 64
"""Distinct sets of frontend tools one app offers its agent (each is an agent registered once)."""
_STATUS = {
    "PROTOCOL_TOO_MANY_TOOL_SETS": 429,
    "RUNTIME_UNKNOWN_AGENT": 404,
    "RUNTIME_INVALID_INPUT": 400,
    "PROTOCOL_INVALID_INPUT": 422,
}
_HEADERS = (
    (b"cache-control", b"no-cache"),
    (b"content-type", b"text/event-stream; charset=utf-8"),
)
_encode = msgspec.json.Encoder(enc_hook=str).encode  # a payload's odd value: its text


def build(
    runtime: Runtime, agent: str, path: str, allowed_hosts: Iterable[str] | None
) -> HostCheck:
    """Return the AG-UI app of ``runtime``'s ``agent``, answering ``POST path``."""
    timeout = _WAIT
    cluster = on_cluster(runtime)
    derived: dict[str, str] = {}  # a tool set's key -> the agent that offers it

    async def run(receive: Any) -> Response:
        try:
            given = read_given(await read_body(receive))
            handle = _handle(runtime, agent, given, derived)
            action = _action(given)
        except Refused as exc:
            return JSONResponse(error_body(exc.code, exc.message), status_code=exc.status)
        except PraxoError as exc:
            status = _STATUS.get(exc.code, 400)
            return JSONResponse(error_body(exc.code, exc.message), status_code=status)
        translation = Translation(given.thread_id, given.run_id)
        events = _events(runtime, handle, action, translation, timeout, cluster)
        return _Stream(events, translation)

    async def endpoint(scope: Scope, receive: Any, send: Any) -> None:
        response = await run(receive)
        await response(scope, receive, send)

    async def post(request: Request) -> Response:
        return await run(request.receive)

    # Starlette's own route answers what is not a POST at ``path`` (405, 404).
    rest = Starlette(routes=[Route(path, post, methods=["POST"])])
    return HostCheck(Door(path, endpoint, rest), allowed_hosts)


async def _events(
    runtime: Runtime,
    handle: SessionHandle,
    action: tuple[str, Any],
    translation: Translation,
    timeout: float,
    cluster: bool,
) -> AsyncIterator[bytes]:
    """Run (or resume) and yield the run's AG-UI events, encoded, to its last.

    The events one praxo event makes are sent together, as one chunk.
    """
    yield _sse(translation.start(), time.time_ns())
    kind, value = action
    stream: Any = None
    try:
        if kind == "run":
            stream = handle.astream(value)
            source: AsyncIterator[Event] = stream
        elif cluster:
            source = resumed_on_cluster(handle, value)
        else:
            source = resumed(runtime, handle, value, timeout)
        async for event in source:
            made = translation.feed(event)
            if made:
                yield _sse(made, event.time_ns)
            if translation.ended:
                return
        if stream is not None:
            result = await stream.result()
            if result.status == "completed":
                yield _sse(translation.feed(_completed(result.run_id, handle.id)), time.time_ns())
                return
        lost = translation.fail(PROTOCOL_RUN_LOST, "the run ended without its last event")
        yield _sse(lost, time.time_ns())
    except Exception as exc:  # the run's failure; a callback's own exception: its type
        code = exc.code if isinstance(exc, PraxoError) else "AGENT_CALLBACK_EXCEPTION"
        message = exc.message if isinstance(exc, PraxoError) else f"{type(exc).__name__}: {exc}"
        yield _sse(translation.fail(code, message), time.time_ns())
    finally:
        if stream is not None:
            await stream.aclose()


class _Stream(EventStream):
    """The run's events, as server-sent events: an ``EventStream`` whose headers are made once
    and whose body ends with the chunk that ends the run (not with an empty message after it).
    """

    def __init__(self, events: AsyncIterator[bytes], translation: Translation) -> None:
        # Starlette's builds its headers on every response.
        self.body_iterator = events
        self.status_code = 200
        self.media_type = "text/event-stream"
        self.background = None
        self.raw_headers = list(_HEADERS)
        self._translation = translation

    async def stream_response(self, send: Any) -> None:
        """Send the status, the headers and every chunk of the run's events."""
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        translation = self._translation
        last = False
        async for chunk in self.body_iterator:
            # The chunk made once the run ended is its last (the iterator ends after it).
            last = translation.ended
            await send({"type": "http.response.body", "body": chunk, "more_body": not last})
        if not last:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def _sse(events: list[AgUiEvent], time_ns: int) -> bytes:
    """Return ``events`` as server-sent events, stamped with ``time_ns`` (in milliseconds)."""
    stamp = time_ns // 1_000_000
    if len(events) == 1:  # most praxo events make one
        event = events[0]
        event["timestamp"] = stamp
        return b"data: " + _encode(event) + b"\n\n"
    for event in events:
        event["timestamp"] = stamp
    return b"".join([b"data: " + _encode(event) + b"\n\n" for event in events])


def _completed(run_id: str, session_id: str) -> Event:
    return Event(type="run.completed", run_id=run_id, session_id=session_id, seq=0, time_ns=0)


def _handle(runtime: Runtime, agent: str, given: Given, derived: dict[str, str]) -> SessionHandle:
    """Return the thread's session handle, with the client's tools added to the agent's."""
    tools = given.tools or []
    name = agent
    if tools:
        key = json.dumps(
            [[t.name, t.description, t.parameters] for t in tools], sort_keys=True, default=str
        )
        known = derived.get(key)
        if known is None:
            if len(derived) >= MAX_TOOL_SETS:
                message = f"more than {MAX_TOOL_SETS} distinct sets of tools"
                raise Refused(429, PROTOCOL_TOO_MANY_TOOL_SETS, message)
            made = [_frontend_tool(t.name, t.description, t.parameters) for t in tools]
            known = derived[key] = with_tools(runtime, agent, made, key)
        name = known
    return runtime.session(given.thread_id, name)


def _frontend_tool(name: str, description: str, parameters: Any) -> Tool:
    """Return a tool that ends the run waiting for the client to call ``name`` itself."""
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        raise Refused(422, PROTOCOL_INVALID_INPUT, f"tool {name!r}: parameters must be an object")

    def handler(_arguments: dict[str, Any]) -> Interrupt:
        context = tool_context()
        call_id = context.call_id if context is not None else None
        return Interrupt({FRONTEND_TOOL: {"name": name, "call_id": call_id}})

    try:
        return Tool(name, description, parameters, handler, text_results=True)
    except Exception as exc:  # a schema the validator cannot compile
        message = f"tool {name!r}: {type(exc).__name__}: {exc}"
        raise Refused(422, PROTOCOL_INVALID_INPUT, message) from None


def _action(given: Given) -> tuple[str, Any]:
    """Return what the request asks: ``("run", text)`` or ``("resume", value)``.

    A ``resume`` entry answers an interrupt (an approval: its payload, ``True`` when it has
    none; ``cancelled``: ``False``); trailing ``tool`` messages answer a frontend tool call
    (the first one's content); trailing ``user`` messages are the new input.
    """
    if given.resume:
        entry = given.resume[0]
        if entry.status == "cancelled":
            return ("resume", False)
        return ("resume", True if entry.payload is None else entry.payload)
    messages = given.messages
    if messages and messages[-1].role == "tool":
        start = len(messages)
        while start > 0 and messages[start - 1].role == "tool":
            start -= 1
        return ("resume", _text(messages[start].content))
    texts: list[str] = []
    for message in reversed(messages):
        if message.role != "user":
            break
        texts.append(_text(message.content))
    if not texts:
        raise Refused(
            422, PROTOCOL_INVALID_INPUT, "no new user message, tool result or resume to run"
        )
    return ("run", "\n\n".join(reversed(texts)))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [getattr(part, "text", None) for part in content or ()]
    texts = [part for part in parts if isinstance(part, str)]
    if not texts:
        raise Refused(422, PROTOCOL_INVALID_INPUT, "a message without text")
    return "\n".join(texts)
