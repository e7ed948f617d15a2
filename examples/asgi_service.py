"""An ASGI service (Starlette) that hosts agent sessions on the actor runtime.

The runtime starts in the app's lifespan and stops on shutdown. Endpoints:

- ``POST /sessions/{id}/runs`` with ``{"input": "...", "deadline": 5.0?}`` runs the agent on
  that session and returns the result as JSON. The handler awaits the run's future, which
  suspends only this request: the event loop keeps serving others. A failure is JSON
  ``{"error": {"code": ..., "message": ..., "run_id"?: ...}}`` with a 4xx/5xx status.
- ``GET /sessions/{id}/events`` streams the session's events as server-sent events. The first
  line is the comment ``: subscribed`` (events from then on are delivered); ``?until=TYPE``
  ends the stream after the first event of that type, ``?limit=N`` after N events.
- ``GET /sessions/{id}/history`` returns the session's committed messages.

The agent is a scripted ``async`` model (a stand-in for an LLM client) with one tool that
counts words. An input of ``fail`` makes the model fail with ``MODEL_UNAVAILABLE``.

Run: ``python examples/asgi_service.py`` (needs ``uvicorn``; ``HOST`` and ``PORT`` change where
it listens, 127.0.0.1:8000 by default; Ctrl-C stops it, exit status 130), then for example::

    curl -N localhost:8000/sessions/s1/events &
    curl -X POST localhost:8000/sessions/s1/runs -d '{"input": "count these words"}'
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from praxo_actors import PraxoError
from praxo_actors.agent import AgentError, Tool, new_agent_options
from praxo_actors.models import (
    ModelError,
    Request,
    ToolCall,
    message_assistant,
    response,
)
from praxo_actors.runtime import EventStream, Runtime

AGENT = "assistant"

# Codes the runtime and the agent loop use, mapped to HTTP statuses; anything else a run fails
# with (a model's own code, AGENT_MAX_STEPS, ...) is a failure upstream of this service: 502.
STATUS_BY_CODE = {
    "INVALID_REQUEST": 400,
    "RUNTIME_INVALID_INPUT": 400,
    "SESSION_BUSY": 409,
    "AGENT_CANCELLED": 409,
    "SESSION_OVERLOADED": 429,
    "RUNTIME_SESSION_LIMIT": 503,
    "RUNTIME_STOPPED": 503,
    "SESSION_CRASHED": 503,
    "AGENT_DEADLINE": 504,
}


async def model(request: Request) -> Any:
    """Count the words of the user's message with the tool, then report the count."""
    await asyncio.sleep(0.01)  # a model call takes time; the event loop serves others meanwhile
    last = request.messages[-1]
    if last.role == "user":
        if last.content == "fail":
            return ModelError("MODEL_UNAVAILABLE", "the model is down")
        return response(message_assistant("", [ToolCall("count_words", {"text": last.content})]))
    count = json.loads(str(last.content))["words"]
    return response(message_assistant(f"You wrote {count} words."))


def count_words(arguments: dict[str, Any]) -> dict[str, Any]:
    """Count the words of ``text``."""
    return {"words": len(str(arguments.get("text", "")).split())}


COUNT_WORDS = Tool(
    "count_words",
    "Count the words of a text.",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    count_words,
)


def create_app(store: str | None = None) -> Starlette:
    """Return the service; the runtime (on ``store``, None: in memory) lives in its lifespan."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # Starting and stopping wait on the supervision tree: keep that off the event loop.
        runtime = await asyncio.to_thread(Runtime.start, store)
        runtime.register_agent(AGENT, lambda: new_agent_options(model, tools=[COUNT_WORDS]))
        app.state.runtime = runtime
        try:
            yield
        finally:
            await asyncio.to_thread(runtime.stop)

    return Starlette(
        routes=[
            Route("/sessions/{session_id}/runs", start_run, methods=["POST"]),
            Route("/sessions/{session_id}/events", stream_events, methods=["GET"]),
            Route("/sessions/{session_id}/history", history, methods=["GET"]),
        ],
        lifespan=lifespan,
    )


async def start_run(request: HTTPRequest) -> Response:
    """Run the agent on the session and return the result."""
    runtime: Runtime = request.app.state.runtime
    try:
        body = await request.json()
    except (ValueError, RecursionError):  # (RecursionError: nested too deep for the parser)
        return error("INVALID_REQUEST", "the body must be JSON")
    if not isinstance(body, dict) or not isinstance(body.get("input"), str):
        return error("INVALID_REQUEST", 'the body must be {"input": "..."}')
    try:
        handle = runtime.session(request.path_params["session_id"], AGENT)
        result = await handle.run(body["input"], deadline=body.get("deadline"))
    except PraxoError as exc:
        return error(exc.code, exc.message, exc.run_id if isinstance(exc, AgentError) else None)
    return JSONResponse(
        {
            "run_id": result.run_id,
            "output": result.output,
            "steps": result.steps,
            "model_calls": result.model_calls,
            "tool_calls": result.tool_calls,
        }
    )


async def history(request: HTTPRequest) -> Response:
    """Return the session's committed messages."""
    runtime: Runtime = request.app.state.runtime
    try:
        handle = runtime.session(request.path_params["session_id"], AGENT)
    except PraxoError as exc:
        return error(exc.code, exc.message)
    # history() asks the session (or reads its checkpoint): a blocking call, so off the loop.
    messages = await asyncio.to_thread(handle.history)
    return JSONResponse({"messages": msgspec.to_builtins(messages)})


async def stream_events(request: HTTPRequest) -> Response:
    """Stream the session's events as server-sent events."""
    runtime: Runtime = request.app.state.runtime
    until = request.query_params.get("until")
    try:
        limit = int(request.query_params.get("limit", "0"))
    except ValueError:
        return error("INVALID_REQUEST", "limit must be an integer")
    events = runtime.events.stream(pattern="*", session_id=request.path_params["session_id"])
    return StreamingResponse(sse(events, until, limit), media_type="text/event-stream")


async def sse(events: EventStream, until: str | None, limit: int) -> AsyncIterator[str]:
    """Format events as server-sent events; stop after ``until`` or ``limit`` (0: no limit)."""
    # The stream subscribed when it was made, so nothing published from here on is missed.
    try:
        yield ": subscribed\n\n"
        sent = 0
        async for event in events:
            data = json.dumps(msgspec.to_builtins(event), separators=(",", ":"))
            yield f"id: {event.run_id}:{event.seq}\nevent: {event.type}\ndata: {data}\n\n"
            sent += 1
            if event.type == until or sent == limit:
                return
    finally:
        await events.aclose()


def error(code: str, message: str, run_id: str | None = None) -> JSONResponse:
    """Return the JSON error response for ``code``."""
    body: dict[str, Any] = {"code": code, "message": message}
    if run_id is not None:
        body["run_id"] = run_id
    return JSONResponse({"error": body}, status_code=STATUS_BY_CODE.get(code, 502))


app = create_app()

if __name__ == "__main__":
    import os
    import sys

    import uvicorn

    # Open event streams end when the runtime stops, which happens after the server has
    # waited for its connections: bound that wait.
    config = uvicorn.Config(
        app,
        host=os.environ.get("HOST", "127.0.0.1"),
        port=int(os.environ.get("PORT", "8000")),
        timeout_graceful_shutdown=5,
    )
    try:
        uvicorn.Server(config).run()
    except KeyboardInterrupt:  # Ctrl-C: the server has shut down and the runtime stopped
        sys.exit(130)
