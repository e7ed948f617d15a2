"""The observer's ASGI app: a page, its JSON views, a person's actions, and live events.

Routes (relative to where the host mounts the app):

- ``GET /`` — the page (plain HTML and one small script, both served from this package, with
  the app's token embedded); ``GET /favicon.ico`` and ``/favicon.svg`` — its icon;
- ``GET /api/state`` — ``{"live_sessions", "sessions", "page", "tree", "statistics",
  "latency_ms", "observer"}``; query ``state``, ``limit``, ``offset``, ``sort``, ``desc`` and
  ``memory`` choose and order the sessions (see :func:`_session_query`);
- ``GET /api/sessions/{id}`` — :meth:`Runtime.inspect` of one session, with ``memory_bytes``;
- ``GET /api/runs`` and ``GET /api/runs/{run_id}`` — recent runs, one run's timeline;
- ``GET /api/approvals`` — the pending approvals; ``GET /api/series`` — the last 15 minutes;
- ``POST /api/approvals/{id}``, ``/api/stop/{id}``, ``/api/passivate/{id}`` — actions;
- ``GET /api/events`` — the event stream as server-sent events (see ``_streams``);
- ``GET /api/schedules``, ``POST /api/schedules/{id}/cancel`` — schedules (see ``_schedules``).

Every handler awaits the runtime's async forms (or a worker thread), so the app may run on the
runtime's own loop (``Runtime.open``) as well as beside it. Bad input is answered with status
400 and ``{"error": {"code", "message"}}``; a stopped runtime with 503; the refusals of
:class:`~praxo_actors.observer._guard.Guard` with 421 or 403.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterable
from importlib import resources
from typing import TYPE_CHECKING, Any

import msgspec

from praxo_actors._errors import PraxoError
from praxo_actors.codes import OBSERVER_UNKNOWN_RUN, RUNTIME_INVALID_INPUT
from praxo_actors.models import Event
from praxo_actors.observer._latency import Latency
from praxo_actors.observer._runs import RUN_STATUSES, RunLog
from praxo_actors.observer._series import Series
from praxo_actors.observer._tree import describe_tree

try:
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    from praxo_actors.observer._actions import (
        Answers,
        answer_approval,
        list_approvals,
        stop_session,
    )
    from praxo_actors.observer._guard import Guard
    from praxo_actors.observer._memory import MemoryEstimates
    from praxo_actors.observer._responses import error_response, json_response
    from praxo_actors.observer._schedules import schedule_routes
    from praxo_actors.observer._streams import Streams
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed extras
    raise ModuleNotFoundError(
        "praxo_actors.observer needs Starlette: pip install 'praxo-actors[observer]'",
        name=exc.name,
    ) from exc

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime, SessionInfo

__all__ = ["observer_app"]

_TREE_LIMIT = 100  # children listed per supervisor (the sessions supervisor may have 100,000)
_SCAN = 100_000  # sessions read to sort them all (the runtime's own session cap)
_SORT_KEYS = ("id", "state", "agent", "queued_runs", "messages", "last_active_s")
_RUNS_LIMIT = 1000


def observer_app(
    runtime: Runtime,
    *,
    redact: bool = True,
    timeout: float = 5.0,
    client_buffer: int = 1000,
    show_arguments: bool = False,
    allowed_hosts: Iterable[str] | None = None,
) -> Starlette:
    """Return an ASGI app that shows what ``runtime`` is doing; mount it in a host service.

    The app subscribes to the runtime's events at once (one subscription) to measure run
    latency and keep its record of recent runs (from then on hosted runs build their events).

    Args:
        runtime: A started :class:`~praxo_actors.runtime.Runtime`.
        redact: PII-redact the strings in events before they are streamed to the page.
        timeout: Bound on each read of the runtime (inspection, the tree) and each action.
        client_buffer: Events queued for each ``/api/events`` client; a client that falls
            further behind (past what its socket already holds) is dropped, its stream
            closed, and counted in ``/api/state``'s ``observer.clients_dropped``.
        show_arguments: Show pending approvals' arguments as they are (default: PII-redacted).
        allowed_hosts: ``host`` or ``host:port`` names accepted in ``Host`` (default: the
            address the server listens on, and ``localhost``/``127.0.0.1``/``[::1]`` on its
            port when that is a loopback address).

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` when ``runtime`` is not a Runtime,
            ``timeout`` is not a positive number, ``client_buffer`` not an int >= 1 or
            ``allowed_hosts`` not strings; ``RUNTIME_STOPPED`` once it has stopped.
    """
    from praxo_actors.runtime import Runtime

    if not isinstance(runtime, Runtime):
        raise PraxoError(RUNTIME_INVALID_INPUT, "observer_app needs a started Runtime")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise PraxoError(RUNTIME_INVALID_INPUT, "timeout must be a positive number")
    if isinstance(client_buffer, bool) or not isinstance(client_buffer, int) or client_buffer < 1:
        raise PraxoError(RUNTIME_INVALID_INPUT, "client_buffer must be an int >= 1")
    hosts = None
    if allowed_hosts is not None:
        hosts = list(allowed_hosts) if not isinstance(allowed_hosts, str) else None
        if hosts is None or not all(isinstance(h, str) and h for h in hosts):
            raise PraxoError(RUNTIME_INVALID_INPUT, "allowed_hosts must be non-empty strs")
    latency, runs, series = Latency(), RunLog(), Series()

    def feed(event: Event) -> None:
        latency(event)
        ended = runs(event)
        if ended is not None:
            series.ended(event.time_ns, *ended)

    runtime.events.subscribe(feed, pattern="*", buffer=10_000)
    token = secrets.token_urlsafe(24)
    files = resources.files(__package__)
    page = files.joinpath("page.html").read_text(encoding="utf-8").replace("__TOKEN__", token)
    script = files.joinpath("observer.js").read_text(encoding="utf-8")
    icon = files.joinpath("favicon.svg").read_bytes()
    streams = Streams(runtime, redact, client_buffer)
    memory = MemoryEstimates(runtime, timeout)
    answers = Answers()

    async def index(_request: Request) -> Response:
        return HTMLResponse(page, headers={"cache-control": "no-store"})

    async def observer_js(_request: Request) -> Response:
        return Response(script, media_type="text/javascript")

    async def favicon(_request: Request) -> Response:
        return Response(icon, media_type="image/svg+xml")

    async def state(request: Request) -> Response:
        try:
            query = _session_query(request)
            sessions, more = await _sessions(runtime, query, timeout)
            rows: list[Any] = sessions
            if query["memory"]:
                rows = await _with_memory(memory, sessions)
            stats = await asyncio.to_thread(runtime.statistics)
            tree = await asyncio.to_thread(describe_tree, runtime.root, _TREE_LIMIT, timeout)
        except PraxoError as exc:
            return error_response(exc)
        series.sample_live(stats.live_sessions)
        page_info = {k: query[k] for k in ("offset", "limit", "sort", "desc")}
        return json_response(
            {
                "live_sessions": stats.live_sessions,
                "sessions": rows,
                "page": {**page_info, "more": more},
                "tree": tree,
                "statistics": stats,
                "latency_ms": latency.snapshot(),
                "observer": streams.statistics(),
            }
        )

    async def inspect(request: Request) -> Response:
        try:
            info = await runtime.ainspect(request.path_params["session_id"], timeout=timeout)
            row = (await _with_memory(memory, [info]))[0]
        except PraxoError as exc:
            return error_response(exc)
        return json_response(row)

    async def run_list(request: Request) -> Response:
        try:
            status, agent, session_id, limit = _runs_query(request)
            await _name_agents(runtime, runs, timeout)
        except PraxoError as exc:
            return error_response(exc)
        return json_response({"runs": runs.runs(status, agent, session_id, limit)})

    async def run_timeline(request: Request) -> Response:
        found = runs.run(request.path_params["run_id"])
        if found is None:
            error = PraxoError(OBSERVER_UNKNOWN_RUN, "the observer holds no such run")
            return error_response(error)
        record, events = found
        shown = [_shown(e, redact) for e in events]
        return json_response({"run": record, "events": shown})

    async def approvals(_request: Request) -> Response:
        try:
            found = await list_approvals(runtime, runs, show_arguments, timeout)
        except PraxoError as exc:
            return error_response(exc)
        return json_response({"approvals": found})

    async def answer(request: Request) -> Response:
        sid = request.path_params["session_id"]
        try:
            answer = await answer_approval(runtime, runs, sid, request, timeout, answers)
            return json_response(answer)
        except PraxoError as exc:
            return error_response(exc)

    async def stop(request: Request) -> Response:
        sid, how = request.path_params["session_id"], request.url.path.split("/api/")[-1]
        try:
            return json_response(await stop_session(runtime, sid, how.split("/")[0], timeout))
        except PraxoError as exc:
            return error_response(exc)

    async def series_view(_request: Request) -> Response:
        return json_response(series.points())

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/observer.js", observer_js),
            Route("/favicon.ico", favicon),
            Route("/favicon.svg", favicon),
            Route("/api/state", state),
            Route("/api/sessions/{session_id:path}", inspect),
            Route("/api/runs", run_list),
            Route("/api/runs/{run_id:path}", run_timeline),
            Route("/api/approvals", approvals),
            Route("/api/approvals/{session_id:path}", answer, methods=["POST"]),
            Route("/api/stop/{session_id:path}", stop, methods=["POST"]),
            Route("/api/passivate/{session_id:path}", stop, methods=["POST"]),
            Route("/api/series", series_view),
            Route("/api/events", streams, methods=["GET"]),
            *schedule_routes(runtime, redact),
        ],
        exception_handlers={HTTPException: _http_error},
    )
    app.state.streams = streams  # for ObserverServer.stop: end the streams before the server
    app.state.token = token
    app.add_middleware(Guard, token=token, allowed_hosts=hosts)
    return app


async def _http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "OBSERVER_NOT_FOUND", 405: "OBSERVER_METHOD_NOT_ALLOWED"}.get(
        exc.status_code, "OBSERVER_HTTP_ERROR"
    )
    body = {"error": {"code": code, "message": str(exc.detail)}}
    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


def _int(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name, str(default))
    try:
        value = int(text)
    except ValueError:
        raise PraxoError(RUNTIME_INVALID_INPUT, f"{name} must be an int, got {text!r}") from None
    if value < 0:
        raise PraxoError(RUNTIME_INVALID_INPUT, f"{name} must be >= 0, got {value}")
    return value


def _session_query(request: Request) -> dict[str, Any]:
    """Read ``state``, ``limit`` (default 1000), ``offset``, ``sort`` (a column, numbers
    compared as numbers, None last), ``desc`` and ``memory`` (add ``memory_bytes``)."""
    query = request.query_params
    sort = query.get("sort") or None
    if sort is not None and sort not in _SORT_KEYS:
        raise PraxoError(RUNTIME_INVALID_INPUT, f"sort must be one of {_SORT_KEYS}")
    return {
        "state": query.get("state") or None,
        "limit": _int(request, "limit", 1000),
        "offset": _int(request, "offset", 0),
        "sort": sort,
        "desc": query.get("desc", "") in ("1", "true"),
        "memory": query.get("memory", "") in ("1", "true"),
    }


async def _sessions(
    runtime: Runtime, query: dict[str, Any], timeout: float
) -> tuple[list[SessionInfo], bool]:
    """Return one page of sessions and whether more follow it."""
    offset, limit, key = query["offset"], query["limit"], query["sort"]
    wanted = _SCAN if key is not None else min(_SCAN, offset + limit + 1)
    found = await runtime.asessions(query["state"], wanted, timeout=timeout)
    if key is not None:
        known = [i for i in found if getattr(i, key) is not None]
        known.sort(key=lambda info: getattr(info, key), reverse=query["desc"])
        found = known + [i for i in found if getattr(i, key) is None]
    return found[offset : offset + limit], len(found) > offset + limit


async def _with_memory(memory: MemoryEstimates, infos: list[SessionInfo]) -> list[Any]:
    sizes = await memory.estimate(infos)
    return [
        {**msgspec.structs.asdict(info), "memory_bytes": size}
        for info, size in zip(infos, sizes, strict=True)
    ]


def _runs_query(request: Request) -> tuple[str | None, str | None, str | None, int]:
    query = request.query_params
    status = query.get("status") or None
    if status is not None and status not in RUN_STATUSES:
        raise PraxoError(RUNTIME_INVALID_INPUT, f"status must be one of {RUN_STATUSES}")
    limit = _int(request, "limit", 100)
    if limit > _RUNS_LIMIT:
        raise PraxoError(RUNTIME_INVALID_INPUT, f"limit must be <= {_RUNS_LIMIT}")
    return status, query.get("agent") or None, query.get("session") or None, limit


async def _name_agents(runtime: Runtime, runs: RunLog, timeout: float) -> None:
    """Name the agent of runs that have none yet, from their sessions' inspection (events
    do not carry the agent)."""
    sessions = sorted(runs.without_agent())
    infos = await asyncio.gather(*(runtime.ainspect(sid, timeout=timeout) for sid in sessions))
    for info in infos:
        if info.agent is not None:
            runs.set_agent(info.id, info.agent)


def _shown(event: Event, redact: bool) -> dict[str, Any]:
    from praxo_actors.core import redact_value

    return {
        "type": event.type,
        "run_id": event.run_id,
        "session_id": event.session_id,
        "seq": event.seq,
        "time_ns": event.time_ns,
        "data": redact_value(event.data) if redact else event.data,
    }
