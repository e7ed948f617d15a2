"""A FastAPI service that hosts agent sessions on the actor runtime, on the app's own event loop.

The lifespan opens the runtime with ``Runtime.open`` on a SQLite file, so sessions and their
``async`` model calls run on uvicorn's loop (a client made on that loop just works). The agent
is durable and the runtime starts with ``resume=True``: every run answered 202 is in the store
by then (running or queued behind another run of its session), and after a SIGTERM or a
SIGKILL the next start runs each once, in order, and ``GET /runs/{run_id}`` finds it; an
approval asked for before the restart is answered after it. Endpoints:

- ``POST /sessions/{id}/runs`` with ``{"input": "...", "deadline": 5.0 | null}`` accepts the
  run and answers 202 ``{"run_id": ...}`` at once (``Location: /runs/{run_id}``). A client that
  would rather wait sends ``Prefer: wait=N`` (RFC 7240, N seconds, at most ``MAX_WAIT``): the
  answer is then 200 ``{"run_id", "status", "output", "steps", "model_calls", "tool_calls"}`` if
  the run ends within N seconds, else the same 202 (the run goes on). ``Prefer:
  respond-async`` is accepted and means what the default does. A failure is JSON
  ``{"error": {"code": ..., "message": ..., "run_id"?: ...}}`` with the status its code maps to
  (``STATUS_BY_CODE``; a model's own code is 502).
- ``GET /runs/{run_id}`` answers 200 with the result as above, 202 ``{"status": "running"}``
  while it runs, 404 ``RUNTIME_UNKNOWN_RUN`` for a run no session knows, or the run's error.
  The runtime finds a run by its id alone (``runtime.aresult``), after a restart too.
- ``GET /sessions/{id}/history`` answers the session's committed messages.
- People in the loop: the agent's ``send_mail`` tool needs approval (``require_approval``). A run
  that reaches it answers ``{"status": "interrupted", "interrupt": {"approval": {...}}}``;
  ``GET /approvals`` lists the sessions waiting for one, and ``POST /sessions/{id}/approval``
  with ``{"approved": true | false, "arguments": {...} | null}`` resumes the run (same
  ``run_id``) and answers how it ended. The echo model calls ``send_mail`` for an input
  ``mail <address>``.
- ``GET /sessions/{id}/events`` streams the session's events as server-sent events. The first
  line is the comment ``: subscribed`` (events from then on are delivered); the stream ends
  when the runtime stops.
- ``POST /research/{id}`` (with ``PRAXO_RESEARCH=1``, or ``create_app(research=True)``) runs
  the research agent of ``research_agent.py``: it searches through an MCP tool
  (``research_tools.py``, a stdio MCP server) and hands what it found to a ``summarizer`` agent
  through ``agent_tool``, on a child session; it answers like a run above, waited for.
- ``GET /healthz`` answers 200 with the runtime's statistics while serving, 503 once stopping.
- The protocols clients speak (``praxo_actors.protocols``, the ``protocols`` extra), on the
  same runtime, mounted after the routes above by :func:`mount_protocols`: ``POST /ag-ui/``
  (AG-UI; the thread is the session), ``/a2a/`` (A2A JSON-RPC, its card at
  ``/a2a/.well-known/agent-card.json``; the context is the session), ``/openai/v1`` (an
  OpenAI client's ``base_url``: ``/openai/v1/chat/completions`` and ``/openai/v1/models``;
  the ``model`` is ``assistant``) and ``/mcp/`` (MCP over streamable HTTP: one tool per
  agent). A thread, a context, a completion's ``user`` or an MCP call's ``session_id`` is the
  session of that id, as in ``/sessions/{id}``. Each answers only the ``Host`` it is served
  on (421 ``PROTOCOL_HOST_REFUSED``). The drain does not wait for their runs: one still
  going when the runtime stops ends ``RUNTIME_STOPPED``, in its protocol's shape.

Shutdown (SIGTERM, Ctrl-C): uvicorn stops accepting connections, then waits up to its
``timeout_graceful_shutdown`` for the open ones, and only then runs the lifespan's exit. So
that an open event stream does not hold that wait to its end, :class:`Server` drains the
service as soon as shutdown begins: new runs are refused with 503, the runs in flight finish,
then the runtime stops, which ends every event stream. Runs still going near the end of the
grace period are failed with ``RUNTIME_STOPPED`` (503, with the ``run_id``), so every request
that was accepted gets an answer before uvicorn gives up on it; such a run is still in the
store, and runs after the restart like every run answered 202. (Under ``uvicorn --factory
fastapi_service:create_app`` there is no such hook: the runtime stops after uvicorn's wait,
so an open event stream is cut when the grace period runs out.)

The model is an ``async`` echo with a short pause (a stand-in for an LLM client; an input of
``fail`` fails it with ``MODEL_UNAVAILABLE``), so the service needs no network. With
``OPENAI_BASE_URL`` set, it is :func:`~praxo_actors.providers.openai_model` on that server
instead (OpenAI, vLLM, llama.cpp, Ollama; the ``openai`` extra): ``OPENAI_MODEL`` names the
model, ``OPENAI_API_KEY`` is its key (a self-hosted server may need none),
``PRAXO_TOOL_CALL_FORMAT`` reads tool calls from the model's text (e.g. ``hermes``) and
``PRAXO_STREAM=1`` streams the text as ``model.delta`` events. Pass your own to
``create_app(model=...)``.

Run: ``python examples/fastapi_service.py`` (uvicorn on 127.0.0.1), then for example::

    curl -N localhost:8000/sessions/s1/events &
    curl -X POST localhost:8000/sessions/s1/runs -H 'content-type: application/json' \\
        -H 'prefer: wait=30' -d '{"input": "hello"}'
    curl localhost:8000/openai/v1/chat/completions -H 'content-type: application/json' \\
        -d '{"model": "assistant", "messages": [{"role": "user", "content": "hi"}]}'

Settings from the environment: ``HOST`` (127.0.0.1), ``PORT`` (8000), ``PRAXO_STORE``
(``.praxo/fastapi_service.sqlite3``), ``PRAXO_GRACE`` (uvicorn's graceful-shutdown seconds,
10), ``PRAXO_MODEL_LATENCY`` (seconds per model call, 0.05), ``PRAXO_ON_BUSY`` (``enqueue``
or ``reject``), ``PRAXO_PROTOCOLS`` (``1``; ``0`` serves no protocol, and so imports none of
their SDKs: they take about as long to import as FastAPI and the runtime together).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Annotated, Any

import msgspec
import uvicorn
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.routing import Mount

from praxo_actors import AgentError, PraxoError
from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.middleware import require_approval
from praxo_actors.models import ModelError, RunResult, ToolCall, message_assistant, response
from praxo_actors.models import Request as ModelRequest
from praxo_actors.models import Response as ModelResponse
from praxo_actors.protocols import a2a_app, ag_ui_app, mcp_server, openai_app
from praxo_actors.runtime import Runtime, SessionHandle

AGENT = "assistant"
DEFAULT_STORE = ".praxo/fastapi_service.sqlite3"

# Codes the runtime and the agent loop use, mapped to HTTP statuses; anything else a run fails
# with (a model's own code, AGENT_MAX_STEPS, ...) is a failure upstream of this service: 502.
STATUS_BY_CODE = {
    "INVALID_REQUEST": 422,
    "RUNTIME_INVALID_INPUT": 422,
    "RUNTIME_UNKNOWN_RUN": 404,
    "SESSION_BUSY": 409,
    "SESSION_INTERRUPTED": 409,
    "SESSION_NOT_INTERRUPTED": 409,
    "AGENT_INVALID_RESUME": 422,
    "AGENT_CANCELLED": 409,
    "SESSION_OVERLOADED": 429,
    "RUNTIME_SESSION_LIMIT": 503,
    "RUNTIME_STOPPED": 503,
    "SESSION_CRASHED": 503,
    "AGENT_DEADLINE": 504,
}

# The runtime stops this long before uvicorn's grace period ends (or half-way through a
# shorter one): time for the refused runs' 503s to be written and the runtime to stop, which
# took 0.2 s with 200 runs pending.
STOP_MARGIN = 1.0

# The longest ``Prefer: wait=N`` honoured: a request holds a connection while it waits, and a
# client that wants longer polls ``GET /runs/{run_id}`` instead.
MAX_WAIT = 300.0

Model = Callable[[ModelRequest], Awaitable[ModelResponse | ModelError]]


class RunBody(BaseModel):
    """The body of ``POST /sessions/{id}/runs``."""

    input: str
    deadline: float | None = None


class ApprovalBody(BaseModel):
    """The body of ``POST /sessions/{id}/approval``."""

    approved: bool
    arguments: dict[str, Any] | None = None


async def send_mail(arguments: dict[str, Any]) -> str:
    """The tool a person approves first (a stand-in: it sends nothing)."""
    return f"sent to {arguments.get('to')}"


def agent_options(model: Model) -> AgentOptions:
    """The agent: the model, and a mail tool whose calls wait for approval."""
    mail = Tool("send_mail", "Send a mail", {"type": "object"}, send_mail)
    return new_agent_options(model, tools=[mail], approval=require_approval(["send_mail"]))


def echo_model(latency: float = 0.05) -> Model:
    """Return an ``async`` model that echoes the user's message after ``latency`` seconds."""

    async def model(request: ModelRequest) -> ModelResponse | ModelError:
        await asyncio.sleep(latency)  # a model call takes time; the loop serves others meanwhile
        last = request.messages[-1]
        text = last.content
        if last.role == "tool":  # the mail tool answered (or was denied)
            return response(message_assistant(f"mail: {text}"))
        if text == "fail":
            return ModelError("MODEL_UNAVAILABLE", "the model is down")
        if isinstance(text, str) and text.startswith("mail "):
            call = ToolCall("send_mail", {"to": text[5:].strip()}, id="mail-1")
            return response(message_assistant("", [call]))
        return response(message_assistant(f"echo: {text}"))

    return model


class Service:
    """The runtime, and whether the service is stopping; one per app."""

    def __init__(self) -> None:
        self.runtime: Runtime | None = None
        self.stopping = False
        self._runs = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._stop: asyncio.Task[None] | None = None

    @contextlib.contextmanager
    def admit(self) -> Iterator[None]:
        """Count a run in flight for the block; refuse it once the service is stopping.

        Raises:
            PraxoError: ``RUNTIME_STOPPED`` once the service is stopping.
        """
        if self.stopping or self.runtime is None:
            raise PraxoError("RUNTIME_STOPPED", "the service is shutting down")
        self._runs += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._runs -= 1
            if self._runs == 0:
                self._idle.set()

    def drain(self, grace: float | None) -> None:
        """Begin stopping: refuse new runs, let those in flight finish, then stop the runtime.

        Args:
            grace: The server's graceful-shutdown seconds (None: wait for the runs as long as
                they take); runs still going ``STOP_MARGIN`` before it ends fail with
                ``RUNTIME_STOPPED``.
        """
        self.stopping = True
        if self._stop is None and self.runtime is not None:
            timeout = None if grace is None else max(grace - STOP_MARGIN, grace / 2)
            self._stop = asyncio.create_task(self._stop_when_idle(self.runtime, timeout))

    async def stop(self) -> None:
        """Stop the runtime now (if draining has not already) and wait until it has stopped."""
        self.drain(0.0)
        if self._stop is not None:
            await self._stop

    async def _stop_when_idle(self, runtime: Runtime, timeout: float | None) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._idle.wait()
        # Pending runs fail with RUNTIME_STOPPED, and every open event stream ends.
        await runtime.astop()


def create_app(
    store_path: str | None = DEFAULT_STORE,
    *,
    model: Model | None = None,
    research: bool = False,
    protocols: bool = True,
    **runtime_options: Any,
) -> FastAPI:
    """Return the service; the runtime (on ``store_path``, None: in memory) lives in its lifespan.

    Args:
        store_path: The SQLite file holding the sessions (one runtime per file).
        model: The agent's model (default: :func:`echo_model`).
        research: Also serve the research agent (``research_agent.py``: an MCP tool and a
            sub-agent) at ``POST /research/{id}``; its MCP server runs as a child process.
        protocols: Also serve the agents over AG-UI, A2A, OpenAI and MCP
            (:func:`mount_protocols`; the ``protocols`` extra).
        runtime_options: Passed to ``Runtime.open`` (``on_busy``, ``max_queue``, ...;
            ``resume`` is True unless given).
    """
    agent_model = model or echo_model()
    service = Service()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # On the app's loop: no thread of the runtime's own, and the model runs here.
        async with contextlib.AsyncExitStack() as stack:
            # resume=True: the runs a stop or a crash cut off (accepted, queued, waiting for an
            # approval) go on; the agent is durable, so each accepted run is in the store.
            options: dict[str, Any] = {"resume": True, **runtime_options}
            runtime = await stack.enter_async_context(Runtime.open(store_path, **options))
            runtime.register_agent(AGENT, lambda: agent_options(agent_model), durable=True)
            if research:  # one MCP client, opened on this loop, serves every session
                import research_agent

                from praxo_actors.mcp import MCPTools

                command, *args = research_agent.SERVER
                mcp = await stack.enter_async_context(MCPTools.stdio(command, args))
                research_agent.register(runtime, mcp.tools)
            if protocols:
                await stack.enter_async_context(mount_protocols(app, runtime))
            service.runtime = runtime
            try:
                yield
            finally:
                await service.stop()
                close = getattr(agent_model, "aclose", None)
                if close is not None:  # a provider's HTTP client, opened on this loop
                    await close()

    app = FastAPI(title="praxo-actors sessions", lifespan=lifespan)
    app.state.service = service
    app.add_exception_handler(PraxoError, praxo_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(HTTPException, unreadable_request)
    app.include_router(router)
    return app


@contextlib.asynccontextmanager
async def mount_protocols(app: FastAPI, runtime: Runtime) -> AsyncIterator[None]:
    """Serve the runtime's agents over AG-UI, A2A, OpenAI and MCP beside the app's own routes
    while the block runs (see docs/how-to/protocols.md).

    The apps need the open runtime, so they are built here, in the lifespan, and mounted after
    the app's routes (none of which they can shadow); they are unmounted when the block ends.
    Starlette runs no mounted app's lifespan: the MCP server's session manager runs here.
    """
    tools = mcp_server(runtime)  # one tool per registered agent
    mounts = [
        Mount("/ag-ui", ag_ui_app(runtime, agent=AGENT)),
        Mount("/a2a", a2a_app(runtime, agent=AGENT)),
        Mount("/openai", openai_app(runtime)),  # its routes are /v1/...
        Mount("/mcp", tools.streamable_http_app(streamable_http_path="/")),
    ]
    async with tools.session_manager.run():
        app.router.routes.extend(mounts)
        try:
            yield
        finally:
            for mount in mounts:
                app.router.routes.remove(mount)


# The dependencies are ``async def``: FastAPI runs a plain ``def`` dependency in its thread
# pool: a thread hand-off each, which cost this service 0.65 ms of CPU per run request. Each
# dependency FastAPI resolves costs about 0.1 ms of CPU per request: ``get_session`` reads the
# service itself rather than depending on ``get_service``.
async def get_service(request: Request) -> Service:
    """Return the app's service (a dependency)."""
    service: Service = request.app.state.service
    return service


ServiceDep = Annotated[Service, Depends(get_service)]


async def get_session(session_id: str, request: Request) -> SessionHandle:
    """Return the handle of the session named in the path (a dependency).

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a bad id; ``RUNTIME_STOPPED`` once stopped.
    """
    service: Service = request.app.state.service
    if service.runtime is None:
        raise PraxoError("RUNTIME_STOPPED", "the service is not running")
    return service.runtime.session(session_id, AGENT)


SessionDep = Annotated[SessionHandle, Depends(get_session)]


router = APIRouter()


@router.post("/sessions/{session_id}/runs", response_model=None)
async def start_run(body: RunBody, session: SessionDep, request: Request) -> JSONResponse:
    """Accept a run and answer 202 with its id, to poll at ``/runs/{id}``; asked ``Prefer:
    wait=N``, answer its result instead if the run ends within N seconds."""
    wait = preferred_wait(request.headers.getlist("prefer"))
    service: Service = request.app.state.service
    with service.admit():
        run_id = await session.asubmit(body.input, deadline=body.deadline)
        if wait is not None:
            try:
                # Only this wait is cancelled if the client goes: the run goes on. The answer
                # is a JSONResponse: FastAPI's own encoding of a returned dict costs more.
                return JSONResponse(run_answer(await session.aresult(run_id, timeout=wait)))
            except PraxoError as exc:
                if exc.code != "RUNTIME_TIMEOUT":
                    raise
    return JSONResponse(
        {"run_id": run_id}, status_code=202, headers={"Location": f"/runs/{run_id}"}
    )


def preferred_wait(prefer: list[str]) -> float | None:
    """Return the seconds a ``Prefer: wait=N`` asks for (at most ``MAX_WAIT``; None: not asked).

    Preferences this service does not know are ignored, as RFC 7240 allows.

    Raises:
        PraxoError: ``INVALID_REQUEST`` for a ``wait`` that is not a number of seconds >= 0.
    """
    for header in prefer:
        for preference in header.split(","):
            name, _, value = preference.split(";")[0].partition("=")
            if name.strip().lower() != "wait":
                continue
            text = value.strip().strip('"')
            try:
                seconds = float(text)
            except ValueError:
                seconds = -1.0
            if not 0 <= seconds < float("inf"):
                raise PraxoError("INVALID_REQUEST", f"Prefer: wait={text!r} is not seconds >= 0")
            return min(seconds, MAX_WAIT)
    return None


@router.post("/research/{session_id}", response_model=None)
async def research(session_id: str, body: RunBody, service: ServiceDep) -> dict[str, Any]:
    """Run the research agent on the session (``create_app(research=True)``) and answer how it
    ended: its MCP search and its summarizer sub-agent run inside the run."""
    if service.runtime is None:
        raise PraxoError("RUNTIME_STOPPED", "the service is not running")
    session = service.runtime.session(session_id, "research")
    with service.admit():
        result = await session.arun(body.input, deadline=body.deadline)
    return run_answer(result)


@router.get("/runs/{run_id}", response_model=None)
async def get_run(run_id: str, service: ServiceDep) -> dict[str, Any] | JSONResponse:
    """Answer a submitted run: 200 with its result, 202 while it runs, 404 if unknown, or its
    error (the status its code maps to)."""
    if service.runtime is None:
        raise PraxoError("RUNTIME_STOPPED", "the service is not running")
    try:
        # Found by its id alone: pending here, kept by its session, or journaled and resumed.
        result = await service.runtime.aresult(run_id, timeout=0)
    except PraxoError as exc:
        if exc.code == "RUNTIME_TIMEOUT":  # still going
            return JSONResponse({"run_id": run_id, "status": "running"}, status_code=202)
        raise
    return run_answer(result)


def run_answer(result: RunResult) -> dict[str, Any]:
    """How a run ended, as JSON: its output, or the approval it waits for."""
    return {
        "run_id": result.run_id,
        "status": result.status,
        "output": result.output,
        "interrupt": result.interrupt,
        "steps": result.steps,
        "model_calls": result.model_calls,
        "tool_calls": result.tool_calls,
    }


@router.get("/approvals")
async def approvals(service: ServiceDep) -> dict[str, Any]:
    """List the sessions whose run waits for an approval, and what it asks."""
    if service.runtime is None:
        raise PraxoError("RUNTIME_STOPPED", "the service is not running")
    waiting = [
        {"session_id": info.id, **info.pending_interrupt}
        for info in await service.runtime.asessions()
        if isinstance(info.pending_interrupt, dict) and "approval" in info.pending_interrupt
    ]
    return {"approvals": waiting}


@router.post("/sessions/{session_id}/approval")
async def approve(body: ApprovalBody, session: SessionDep, service: ServiceDep) -> dict[str, Any]:
    """Approve or deny the call the session's run waits for; answer how the run ended."""
    decision: Any = {"approved": body.approved}
    if body.arguments is not None:
        decision["arguments"] = body.arguments
    with service.admit():
        result = await session.aresume(decision)
    return run_answer(result)


@router.get("/sessions/{session_id}/history")
async def history(session: SessionDep) -> dict[str, Any]:
    """Answer the session's committed messages."""
    return {"messages": msgspec.to_builtins(await session.ahistory())}


@router.get("/sessions/{session_id}/events", response_class=EventSourceResponse)
async def events(session: SessionDep, service: ServiceDep) -> AsyncIterator[ServerSentEvent]:
    """Stream the session's events as server-sent events until the runtime stops."""
    assert service.runtime is not None  # get_session checked it
    # Subscribed here, before the first line is sent: nothing published after it is missed.
    async with service.runtime.events.stream(pattern="*", session_id=session.id) as stream:
        yield ServerSentEvent(comment="subscribed")
        async for event in stream:
            yield ServerSentEvent(
                raw_data=msgspec.json.encode(event).decode(),
                event=event.type,
                id=f"{event.run_id}:{event.seq}",
            )


@router.get("/healthz")
async def healthz(service: ServiceDep) -> JSONResponse:
    """Answer 200 with the runtime's statistics while serving, 503 once stopping."""
    if service.stopping or service.runtime is None:
        return JSONResponse({"status": "stopping"}, status_code=503)
    statistics = msgspec.to_builtins(service.runtime.statistics())
    return JSONResponse({"status": "ok", "statistics": statistics})


async def praxo_error(request: Request, exc: Exception) -> JSONResponse:
    """Answer a runtime or agent error as JSON, with the status its code maps to."""
    assert isinstance(exc, PraxoError)
    run_id = exc.run_id if isinstance(exc, AgentError) else None
    return error(exc.code, exc.message, run_id)


async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
    """Answer a body that does not validate as ``INVALID_REQUEST``."""
    assert isinstance(exc, RequestValidationError)
    details = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    return error("INVALID_REQUEST", details)


async def unreadable_request(request: Request, exc: Exception) -> JSONResponse:
    """Answer a body FastAPI cannot parse (nested too deep, say) as ``INVALID_REQUEST``, and
    any other HTTP error (404, 405) with its status and a code."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 400:
        return error("INVALID_REQUEST", str(exc.detail))
    body = {"code": f"HTTP_{exc.status_code}", "message": str(exc.detail)}
    return JSONResponse({"error": body}, status_code=exc.status_code, headers=exc.headers)


def error(code: str, message: str, run_id: str | None = None) -> JSONResponse:
    """Return the JSON error response for ``code``."""
    body: dict[str, Any] = {"code": code, "message": message}
    if run_id is not None:
        body["run_id"] = run_id
    return JSONResponse({"error": body}, status_code=STATUS_BY_CODE.get(code, 502))


class Server(uvicorn.Server):
    """uvicorn's server, draining the service as soon as shutdown begins."""

    def __init__(self, config: uvicorn.Config, service: Service) -> None:
        super().__init__(config)
        self.service = service

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Drain the service, then shut down as uvicorn does (close, wait, lifespan exit).

        uvicorn calls ``shutdown`` on the server's loop once a signal has set ``should_exit``
        (checked against uvicorn 0.54), before it stops accepting connections.
        """
        self.service.drain(self.config.timeout_graceful_shutdown)
        await super().shutdown(sockets)


# uvicorn's own logging set-up, plus the library's loggers: without them the runtime's reports
# (a crashed session, an abandoned thread) would go nowhere (see docs/how-to/logging.md).
LOG_CONFIG: dict[str, Any] = {
    **uvicorn.config.LOGGING_CONFIG,
    "loggers": {
        **uvicorn.config.LOGGING_CONFIG["loggers"],
        "praxo_actors": {"handlers": ["default"], "level": "WARNING"},
        "supervisors": {"handlers": ["default"], "level": "WARNING"},
    },
}


def model_from_environment() -> Model:
    """Return ``openai_model`` on ``OPENAI_BASE_URL`` when it is set, else the echo model."""
    base_url = os.environ.get("OPENAI_BASE_URL")
    if not base_url:
        return echo_model(float(os.environ.get("PRAXO_MODEL_LATENCY", "0.05")))
    from praxo_actors.providers import openai_model

    return openai_model(
        os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
        base_url=base_url,
        api_key=os.environ.get("OPENAI_API_KEY", "unused"),
        tool_call_format=os.environ.get("PRAXO_TOOL_CALL_FORMAT") or None,
        stream=os.environ.get("PRAXO_STREAM") == "1",
    )


def main() -> None:
    """Serve the app with the settings from the environment."""
    app = create_app(
        os.environ.get("PRAXO_STORE", DEFAULT_STORE),
        model=model_from_environment(),
        research=os.environ.get("PRAXO_RESEARCH") == "1",
        protocols=os.environ.get("PRAXO_PROTOCOLS", "1") != "0",
        on_busy=os.environ.get("PRAXO_ON_BUSY", "enqueue"),
    )
    config = uvicorn.Config(
        app,
        host=os.environ.get("HOST", "127.0.0.1"),
        port=int(os.environ.get("PORT", "8000")),
        timeout_graceful_shutdown=int(os.environ.get("PRAXO_GRACE", "10")),
        log_config=LOG_CONFIG,
    )
    Server(config, app.state.service).run()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C: what main() started has stopped by now
        sys.exit(130)
