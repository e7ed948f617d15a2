"""The ASGI service example serves runs, event streams and history over real HTTP."""

from __future__ import annotations

import json
import runpy
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "asgi_service.py"
TIMEOUT = 10.0


@dataclass
class Service:
    """A running server and a client for it."""

    client: httpx.Client
    app: Any


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    """Serve the example app with uvicorn on a loopback port; stop it and its threads after."""
    threads_before = set(threading.enumerate())
    app = runpy.run_path(str(EXAMPLE))["create_app"](str(tmp_path / "service.sqlite3"))
    # Bound before the server starts: requests made meanwhile wait in the listen backlog.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="uvicorn")
    thread.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=TIMEOUT) as client:
            yield Service(client, app)
    finally:
        server.should_exit = True
        thread.join(TIMEOUT)
        sock.close()
        assert not thread.is_alive(), "the server did not stop"
        for leftover in set(threading.enumerate()) - threads_before:
            leftover.join(TIMEOUT)
        leaked = [t.name for t in set(threading.enumerate()) - threads_before if t.is_alive()]
        assert leaked == []


def read_events(lines: Iterator[str]) -> list[dict[str, Any]]:
    """Parse server-sent events until the stream ends."""
    events: list[dict[str, Any]] = []
    fields: dict[str, str] = {}
    for line in lines:
        if line == "":
            if fields:
                events.append(fields)
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(": ")
            fields[name] = value
    return events


def test_a_run_returns_the_agent_output(service: Service) -> None:
    """POST /sessions/{id}/runs awaits the run and returns its output and counters."""
    reply = service.client.post("/sessions/s1/runs", json={"input": "three little words"})
    assert reply.status_code == 200
    body = reply.json()
    assert body["output"] == "You wrote 3 words."
    assert (body["steps"], body["model_calls"], body["tool_calls"]) == (2, 2, 1)
    assert body["run_id"].startswith("run_")


def test_the_event_stream_shows_a_run_as_it_happens(service: Service) -> None:
    """GET /sessions/{id}/events streams the session's events, in order, as SSE."""
    with service.client.stream(
        "GET", "/sessions/s2/events", params={"until": "run.completed"}
    ) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        assert next(lines) == ": subscribed"
        with ThreadPoolExecutor(1) as pool:
            posted = pool.submit(service.client.post, "/sessions/s2/runs", json={"input": "a b"})
            events = read_events(lines)
            run = posted.result(TIMEOUT).json()
    types = [e["event"] for e in events]
    assert types[0] == "run.started" and types[-1] == "run.completed"
    assert "tool.completed" in types
    data = [json.loads(e["data"]) for e in events]
    assert [d["seq"] for d in data] == list(range(len(data)))
    assert {d["run_id"] for d in data} == {run["run_id"]}
    assert events[0]["id"] == f"{run['run_id']}:0"


def test_the_event_stream_holds_only_its_session(service: Service) -> None:
    """A stream filtered to one session never shows another session's run."""
    with service.client.stream("GET", "/sessions/mine/events", params={"limit": "1"}) as stream:
        lines = stream.iter_lines()
        assert next(lines) == ": subscribed"
        assert service.client.post("/sessions/other/runs", json={"input": "x"}).status_code == 200
        assert service.client.post("/sessions/mine/runs", json={"input": "y"}).status_code == 200
        events = read_events(lines)
    assert len(events) == 1
    assert json.loads(events[0]["data"])["session_id"] == "mine"


def test_a_client_leaving_a_stream_unsubscribes(service: Service) -> None:
    """Closing an open event stream early leaves the service serving."""
    with service.client.stream("GET", "/sessions/s3/events") as stream:
        assert next(stream.iter_lines()) == ": subscribed"
    reply = service.client.post("/sessions/s3/runs", json={"input": "still serving"})
    assert reply.json()["output"] == "You wrote 2 words."


def test_history_returns_the_committed_messages(service: Service) -> None:
    """GET /sessions/{id}/history holds the runs that completed, not the failed one."""
    assert service.client.post("/sessions/s4/runs", json={"input": "one two"}).status_code == 200
    assert service.client.post("/sessions/s4/runs", json={"input": "fail"}).status_code == 502
    messages = service.client.get("/sessions/s4/history").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[0]["content"] == "one two"
    assert messages[-1]["content"] == "You wrote 2 words."


def test_a_model_failure_is_a_json_error_with_its_code(service: Service) -> None:
    """A run that fails with a model's code answers 502 with the code and the run id."""
    reply = service.client.post("/sessions/s5/runs", json={"input": "fail"})
    assert reply.status_code == 502
    error = reply.json()["error"]
    assert error["code"] == "MODEL_UNAVAILABLE"
    assert error["run_id"].startswith("run_")


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"not json", 400, "INVALID_REQUEST"),
        (b'{"text": "wrong field"}', 400, "INVALID_REQUEST"),
        (b'{"input": "x", "deadline": "soon"}', 400, "RUNTIME_INVALID_INPUT"),
        (b'{"input": "x", "deadline": 1e308}', 400, "RUNTIME_INVALID_INPUT"),
        (b"[" * 100_000, 400, "INVALID_REQUEST"),
    ],
)
def test_a_bad_request_is_refused_with_a_code(
    service: Service, body: bytes, status: int, code: str
) -> None:
    """A malformed body answers 4xx JSON carrying the error code."""
    reply = service.client.post("/sessions/s6/runs", content=body)
    assert reply.status_code == status
    assert reply.json()["error"]["code"] == code
