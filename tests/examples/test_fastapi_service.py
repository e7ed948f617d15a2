"""The FastAPI example serves runs, history and event streams over real HTTP, and stops cleanly.

Each server is ``python examples/fastapi_service.py`` in a subprocess (real uvicorn on a
loopback port, a SQLite store in the test's directory), driven with httpx.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import runpy
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from praxo_actors.testing._eventually import eventually

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fastapi_service.py"
TIMEOUT = 10.0
# A cold interpreter imports FastAPI, pydantic, the runtime and the protocols' SDKs first: 7 s
# without the SDKs and 16 s with them, measured on a loaded 2-core machine.
START_TIMEOUT = 40.0
POLL = 0.02  # seconds between two looks at a condition another process makes true
# What uvicorn logs when its graceful-shutdown period runs out and it cancels what is left.
GRACE_RAN_OUT = "timeout graceful shutdown exceeded"
# The tests' clients wait for a run's result (the example answers 202 at once without it).
WAIT = {"Prefer": "wait=60"}


@dataclass
class Server:
    """A running ``examples/fastapi_service.py`` process and a client for it."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path
    client: httpx.Client

    def logged(self) -> str:
        """Return what the server has printed so far."""
        return self.log.read_text(errors="replace")

    def statistics(self) -> dict[str, Any]:
        """Return the runtime's statistics from ``/healthz``."""
        reply = self.client.get("/healthz")
        assert reply.status_code == 200, reply.text
        statistics: dict[str, Any] = reply.json()["statistics"]
        return statistics

    def terminate(self) -> None:
        """Send SIGTERM, as a process manager does to stop a service."""
        self.process.send_signal(signal.SIGTERM)

    def wait(self) -> int:
        """Wait (bounded) for the process to exit; return its exit status."""
        return self.process.wait(TIMEOUT)


def free_port() -> int:
    """Return a loopback port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@contextlib.contextmanager
def serve(
    directory: Path, store: Path, script: Path = EXAMPLE, **settings: str
) -> Iterator[Server]:
    """Run the example (or a ``script`` that runs it) until it is ready; stop it (and check it
    stopped) after."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # The echo model unless a test points the example at a server of its own.
    inherited = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}
    env = {**inherited, "PORT": str(port), "PRAXO_STORE": str(store), **settings}
    log = directory / f"server-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(script)], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        with httpx.Client(base_url=url, timeout=TIMEOUT, headers=WAIT) as client:
            server = Server(process, url, log, client)
            wait_until_ready(server)
            yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(TIMEOUT)
            raise AssertionError(f"the server ignored SIGTERM:\n{log.read_text()}") from None


def wait_until_ready(server: Server) -> None:
    """Poll ``/healthz`` until it answers 200; fail if the process exits or time runs out."""

    def ready() -> bool:
        if server.process.poll() is not None:  # fail now, not once the wait is over
            pytest.fail(f"the server exited:\n{server.logged()}")
        with contextlib.suppress(httpx.TransportError):
            return server.client.get("/healthz").status_code == 200
        return False

    eventually(ready, timeout=START_TIMEOUT, interval=POLL, what="/healthz answering 200")


def read_events(lines: Iterator[str], until: str | None = None) -> list[dict[str, str]]:
    """Parse server-sent events until the stream ends (or after the first ``until`` event)."""
    events: list[dict[str, str]] = []
    fields: dict[str, str] = {}
    for line in lines:
        if line == "":
            if fields:
                events.append(fields)
                if fields.get("event") == until:
                    return events
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(": ")
            fields[name] = value
    return events


def user_inputs(server: Server, session: str) -> list[str]:
    """Return the user messages of the session's committed history, in order."""
    reply = server.client.get(f"/sessions/{session}/history")
    assert reply.status_code == 200, reply.text
    return [m["content"] for m in reply.json()["messages"] if m["role"] == "user"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Serve the example with ``on_busy="reject"`` and 0.2 s model calls for this module."""
    directory = tmp_path_factory.mktemp("fastapi")
    settings = {"PRAXO_ON_BUSY": "reject", "PRAXO_MODEL_LATENCY": "0.2"}
    with serve(directory, directory / "service.sqlite3", **settings) as running:
        yield running


def test_a_run_answers_the_agent_output(server: Server) -> None:
    """POST /sessions/{id}/runs with Prefer: wait=N answers the run's output and counters."""
    reply = server.client.post("/sessions/s1/runs", json={"input": "hello"})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["output"] == "echo: hello"
    assert (body["steps"], body["model_calls"], body["tool_calls"]) == (1, 1, 0)
    assert body["run_id"].startswith("run_")


def test_history_holds_the_completed_runs_only(server: Server) -> None:
    """GET /sessions/{id}/history holds the runs that completed, not the failed one."""
    for text, status in [("one", 200), ("fail", 502), ("two", 200)]:
        assert server.client.post("/sessions/s2/runs", json={"input": text}).status_code == status
    messages = server.client.get("/sessions/s2/history").json()["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "one"),
        ("assistant", "echo: one"),
        ("user", "two"),
        ("assistant", "echo: two"),
    ]


def test_a_model_failure_answers_502_with_its_code(server: Server) -> None:
    """A run that fails with the model's own code answers 502 with the code and the run id."""
    reply = server.client.post("/sessions/s3/runs", json={"input": "fail"})
    assert reply.status_code == 502
    error = reply.json()["error"]
    assert error["code"] == "MODEL_UNAVAILABLE"
    assert error["run_id"].startswith("run_")


def test_a_run_past_its_deadline_answers_504_and_commits_nothing(server: Server) -> None:
    """A deadline shorter than the model call answers 504 AGENT_DEADLINE; history stays empty."""
    reply = server.client.post("/sessions/s4/runs", json={"input": "late", "deadline": 0.01})
    assert reply.status_code == 504
    assert reply.json()["error"]["code"] == "AGENT_DEADLINE"
    assert user_inputs(server, "s4") == []


def test_a_run_on_a_busy_session_answers_409(server: Server) -> None:
    """With on_busy="reject", a second run while the first one runs answers 409 SESSION_BUSY."""
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(server.client.post, "/sessions/s5/runs", json={"input": "first"})
        eventually(lambda: server.statistics()["runs_pending"] > 0, what="the first run is running")
        second = server.client.post("/sessions/s5/runs", json={"input": "second"})
        assert first.result(TIMEOUT).status_code == 200
    assert second.status_code == 409
    assert second.json()["error"]["code"] == "SESSION_BUSY"
    assert user_inputs(server, "s5") == ["first"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"not json", "INVALID_REQUEST"),
        (b'{"text": "wrong field"}', "INVALID_REQUEST"),
        (b'{"input": "x", "deadline": "soon"}', "INVALID_REQUEST"),
        (b'{"input": "x", "deadline": -1}', "RUNTIME_INVALID_INPUT"),
        (b'{"input": "x", "deadline": 1e308}', "RUNTIME_INVALID_INPUT"),
        (b"[" * 100_000, "INVALID_REQUEST"),
        (b'{"input": "\\ud800"}', "RUNTIME_INVALID_INPUT"),
    ],
)
def test_a_bad_request_answers_422_with_a_code(server: Server, body: bytes, code: str) -> None:
    """A body the service or the runtime refuses answers 422 JSON carrying the error code."""
    reply = server.client.post(
        "/sessions/s6/runs", content=body, headers={"content-type": "application/json"}
    )
    assert reply.status_code == 422, reply.text
    assert reply.json()["error"]["code"] == code


def test_healthz_answers_the_statistics(server: Server) -> None:
    """GET /healthz answers 200 with the runtime's counters while the service runs."""
    reply = server.client.get("/healthz")
    assert reply.status_code == 200
    assert reply.json()["status"] == "ok"
    assert {"live_sessions", "runs_completed", "runs_pending"} <= set(reply.json()["statistics"])


def test_the_event_stream_shows_a_run_as_it_happens(server: Server) -> None:
    """GET /sessions/{id}/events streams the session's events, in order, as SSE."""
    with server.client.stream("GET", "/sessions/s7/events") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        assert next(lines) == ": subscribed"
        with ThreadPoolExecutor(1) as pool:
            posted = pool.submit(server.client.post, "/sessions/s7/runs", json={"input": "hi"})
            events = read_events(lines, until="run.completed")
            run = posted.result(TIMEOUT).json()
    assert [e["event"] for e in events] == [
        "run.started",
        "model.requested",
        "model.responded",
        "run.completed",
    ]
    data = [json.loads(e["data"]) for e in events]
    assert [d["seq"] for d in data] == list(range(len(data)))
    assert {(d["run_id"], d["session_id"]) for d in data} == {(run["run_id"], "s7")}
    assert events[0]["id"] == f"{run['run_id']}:0"


def test_a_client_leaving_a_stream_unsubscribes(server: Server) -> None:
    """Closing an open event stream early removes its subscription; the service keeps serving."""
    with server.client.stream("GET", "/sessions/s8/events") as stream:
        lines = stream.iter_lines()  # kept: a dropped line iterator would close the stream
        assert next(lines) == ": subscribed"
        assert server.statistics()["subscriptions"] == 1
    eventually(lambda: server.statistics()["subscriptions"] == 0, what="the stream unsubscribed")
    assert server.client.post("/sessions/s8/runs", json={"input": "still"}).status_code == 200


def test_an_open_event_stream_ends_when_the_server_stops(tmp_path: Path) -> None:
    """SIGTERM ends an open event stream cleanly, without the grace period running out."""
    with serve(tmp_path, tmp_path / "s.sqlite3", PRAXO_GRACE="60") as server:
        with server.client.stream("GET", "/sessions/s/events") as stream:
            lines = stream.iter_lines()
            assert next(lines) == ": subscribed"
            assert server.client.post("/sessions/s/runs", json={"input": "x"}).status_code == 200
            assert read_events(lines, until="run.completed")[-1]["event"] == "run.completed"
            server.terminate()
            assert read_events(lines) == []  # the body ends: no incomplete chunked read
        assert server.wait() == -signal.SIGTERM  # uvicorn re-raises the signal it handled
    assert GRACE_RAN_OUT not in server.logged()  # the stream ended; uvicorn cut nothing off


Outcome = tuple[int, str, int | str, str | None]
"""One POSTed run: session number, input, HTTP status (or the transport error), error code."""


def test_sigterm_under_load_answers_every_accepted_request_and_loses_nothing(
    tmp_path: Path,
) -> None:
    """200 runs in flight at SIGTERM each get 200 or 503, the server exits without its grace
    period running out, and a restart finds every run answered 200 in its session's history."""
    sessions, runs_per_session, grace = 20, 10, 3
    store = tmp_path / "s.sqlite3"
    # 10 runs of 0.25 s take 2.5 s per session: the drain (the grace period less the example's
    # 1 s STOP_MARGIN) cannot finish them all, so some complete after SIGTERM, the rest fail.
    settings = {"PRAXO_GRACE": str(grace), "PRAXO_MODEL_LATENCY": "0.25"}
    with serve(tmp_path, store, **settings) as server:
        load = asyncio.run(post_then_terminate(server, sessions, runs_per_session))
        exit_status = server.wait()
    answered = collections.Counter(status for _, _, status, _ in load.outcomes)
    print(
        f"SIGTERM under load: {dict(answered)} ({load.completed_before} completed before it), "
        f"exit {load.exited:.2f} s after SIGTERM"
    )
    assert len(load.outcomes) == sessions * runs_per_session
    assert set(answered) <= {200, 503}, answered  # no resets, no other status
    assert answered[503] > 0 and answered[200] > load.completed_before, answered
    assert {code for _, _, status, code in load.outcomes if status == 503} == {"RUNTIME_STOPPED"}
    # uvicorn closes its listening socket at once: a new connection is refused meanwhile.
    assert load.refused_while_draining
    # The example drained and stopped its runtime itself: uvicorn had nothing left to cut off.
    assert GRACE_RAN_OUT not in server.logged(), f"exited {load.exited:.2f} s after SIGTERM"
    assert exit_status == -signal.SIGTERM  # uvicorn re-raises the signal it handled

    with serve(tmp_path, store) as restarted:
        for s in range(sessions):
            history = user_inputs(restarted, f"s{s}")
            acknowledged = {
                text for session, text, status, _ in load.outcomes if session == s and status == 200
            }
            assert acknowledged <= set(history), f"s{s} lost {acknowledged - set(history)}"
            assert len(history) == len(set(history)) <= runs_per_session


@dataclass
class Load:
    """What :func:`post_then_terminate` saw."""

    outcomes: list[Outcome]
    completed_before: int
    refused_while_draining: bool
    exited: float


async def post_then_terminate(server: Server, sessions: int, runs_per_session: int) -> Load:
    """POST every run at once, send SIGTERM once the runtime holds them all, collect answers."""
    total = sessions * runs_per_session
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(
        base_url=server.url, timeout=TIMEOUT, limits=limits, headers=WAIT
    ) as client:

        async def post(session: int, text: str) -> Outcome:
            try:
                reply = await client.post(f"/sessions/s{session}/runs", json={"input": text})
            except httpx.TransportError as exc:
                return session, text, type(exc).__name__, None
            code = reply.json()["error"]["code"] if reply.status_code != 200 else None
            return session, text, reply.status_code, code

        tasks = [
            asyncio.create_task(post(s, f"m{i}"))
            for i in range(runs_per_session)
            for s in range(sessions)
        ]
        deadline = time.monotonic() + TIMEOUT
        while True:
            statistics = (await client.get("/healthz")).json()["statistics"]
            if statistics["runs_started"] == total:
                break
            assert time.monotonic() < deadline, "the runs did not all reach the runtime"
            await asyncio.sleep(POLL)
        stopping = time.monotonic()
        server.terminate()
        refused_while_draining = await refused(server)
        outcomes = await asyncio.wait_for(asyncio.gather(*tasks), TIMEOUT)
    while server.process.poll() is None:
        assert time.monotonic() - stopping < TIMEOUT, "the server did not exit"
        await asyncio.sleep(POLL)
    exited = time.monotonic() - stopping
    return Load(outcomes, statistics["runs_completed"], refused_while_draining, exited)


async def refused(server: Server) -> bool:
    """Return whether a new connection is refused while the server process still runs."""
    deadline = time.monotonic() + TIMEOUT
    # No keep-alive: each probe is a new connection, as a new client's would be.
    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT, limits=limits) as probe:
        while time.monotonic() < deadline:
            try:
                await probe.get("/healthz")
            except httpx.ConnectError:
                return server.process.poll() is None
            except httpx.TransportError:
                pass  # accepted into the backlog just as the listener closed: reset, try again
            await asyncio.sleep(POLL)
    return False


def test_a_draining_service_refuses_runs_and_fails_its_health_check(no_thread_leaks: None) -> None:
    """Once draining begins, /healthz and new runs answer 503 (in process, on the app's loop)."""
    app = runpy.run_path(str(EXAMPLE))["create_app"](None)

    async def drive() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://app") as client,
        ):
            healthy = await client.get("/healthz")
            app.state.service.drain(5.0)
            draining = await client.get("/healthz")
            run = await client.post("/sessions/s/runs", json={"input": "x"})
        return healthy, draining, run

    healthy, draining, run = asyncio.run(drive())
    assert healthy.status_code == 200
    assert (draining.status_code, draining.json()) == (503, {"status": "stopping"})
    assert run.status_code == 503
    assert run.json()["error"]["code"] == "RUNTIME_STOPPED"


def test_an_approval_is_listed_approved_over_http_and_the_run_goes_on(server: Server) -> None:
    """A run reaching send_mail waits; GET /approvals lists it; POST .../approval resumes it."""
    asked = server.client.post("/sessions/mailer/runs", json={"input": "mail ada@example.com"})
    assert asked.status_code == 200, asked.text
    body = asked.json()
    assert body["status"] == "interrupted" and body["output"] == ""
    wanted = {"tool": "send_mail", "arguments": {"to": "ada@example.com"}, "call_id": "mail-1"}
    assert body["interrupt"] == {"approval": wanted}
    listed = server.client.get("/approvals").json()["approvals"]
    assert {"session_id": "mailer", "approval": wanted} in listed
    busy = server.client.post("/sessions/mailer/runs", json={"input": "hello"})
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "SESSION_INTERRUPTED"
    edited = {"approved": True, "arguments": {"to": "bo@example.com"}}
    done = server.client.post("/sessions/mailer/approval", json=edited)
    assert done.status_code == 200, done.text
    finished = done.json()
    assert finished["status"] == "completed" and finished["run_id"] == body["run_id"]
    assert finished["output"] == 'mail: "sent to bo@example.com"'
    assert all(
        a["session_id"] != "mailer" for a in server.client.get("/approvals").json()["approvals"]
    )
    again = server.client.post("/sessions/mailer/approval", json={"approved": True})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "SESSION_NOT_INTERRUPTED"


def test_a_denied_mail_is_not_sent(server: Server) -> None:
    server.client.post("/sessions/denied/runs", json={"input": "mail eve@example.com"})
    done = server.client.post("/sessions/denied/approval", json={"approved": False})
    assert done.status_code == 200, done.text
    assert "APPROVAL_DENIED" in done.json()["output"]


ASYNC = {"Prefer": "respond-async"}


def poll(server: Server, run_id: str) -> httpx.Response:
    """GET /runs/{run_id} until it no longer answers 202 (bounded)."""
    answers: list[httpx.Response] = []

    def settled() -> bool:
        answers.append(server.client.get(f"/runs/{run_id}"))
        return answers[-1].status_code != 202

    eventually(settled, what=f"run {run_id} to settle")
    return answers[-1]


def test_a_submitted_run_answers_202_and_its_result_is_polled(server: Server) -> None:
    """POST with Prefer: respond-async answers 202 and the run id at once; GET /runs/{id}
    answers 202 while it runs, then 200 with the result."""
    reply = server.client.post("/sessions/p1/runs", json={"input": "later"}, headers=ASYNC)
    assert reply.status_code == 202, reply.text
    run_id = reply.json()["run_id"]
    assert reply.headers["location"] == f"/runs/{run_id}"
    first = server.client.get(f"/runs/{run_id}")  # the model takes 0.2 s: likely running
    if first.status_code != 200:  # a busy machine may have let it end already
        assert first.status_code == 202 and first.json() == {"run_id": run_id, "status": "running"}
    done = poll(server, run_id)
    assert done.status_code == 200, done.text
    assert done.json()["output"] == "echo: later" and done.json()["run_id"] == run_id


def test_polling_an_unknown_run_answers_404(server: Server) -> None:
    """A run id that was never submitted is 404 RUNTIME_UNKNOWN_RUN."""
    reply = server.client.get("/runs/run_nope")
    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "RUNTIME_UNKNOWN_RUN"


def test_a_failed_submitted_run_answers_its_error(server: Server) -> None:
    """A submitted run that fails is polled as its error code, with the status it maps to."""
    reply = server.client.post("/sessions/p2/runs", json={"input": "fail"}, headers=ASYNC)
    assert reply.status_code == 202, reply.text
    done = poll(server, reply.json()["run_id"])
    assert done.status_code == 502 and done.json()["error"]["code"] == "MODEL_UNAVAILABLE"


def test_a_run_answers_202_by_default_and_its_result_is_polled(server: Server) -> None:
    """POST without a Prefer header accepts the run and answers 202 with its id at once."""
    with httpx.Client(base_url=server.url, timeout=TIMEOUT) as plain:
        reply = plain.post("/sessions/p3/runs", json={"input": "default"})
    assert reply.status_code == 202, reply.text
    run_id = reply.json()["run_id"]
    assert reply.json() == {"run_id": run_id}
    assert reply.headers["location"] == f"/runs/{run_id}"
    done = poll(server, run_id)
    assert done.status_code == 200, done.text
    assert done.json()["output"] == "echo: default"


def test_a_run_longer_than_the_wait_answers_202_and_goes_on(server: Server) -> None:
    """Prefer: wait=0 on a 0.2 s model call answers 202; the run still completes."""
    reply = server.client.post(
        "/sessions/p4/runs", json={"input": "slow"}, headers={"Prefer": "wait=0"}
    )
    assert reply.status_code == 202, reply.text
    done = poll(server, reply.json()["run_id"])
    assert done.status_code == 200 and done.json()["output"] == "echo: slow"
    assert user_inputs(server, "p4") == ["slow"]


def test_a_wait_among_other_preferences_is_honoured(server: Server) -> None:
    """Prefer: handling=lenient, wait=30 (RFC 7240's list form) waits for the result."""
    prefer = {"Prefer": 'handling=lenient, wait="30"'}
    reply = server.client.post("/sessions/p5/runs", json={"input": "listed"}, headers=prefer)
    assert reply.status_code == 200, reply.text
    assert reply.json()["output"] == "echo: listed"


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_bad_wait_answers_422_invalid_request(server: Server, value: str) -> None:
    """A wait that is not a number of seconds >= 0 is refused, and no run is started."""
    reply = server.client.post(
        "/sessions/p6/runs", json={"input": "x"}, headers={"Prefer": f"wait={value}"}
    )
    assert reply.status_code == 422, reply.text
    assert reply.json()["error"]["code"] == "INVALID_REQUEST"
    assert user_inputs(server, "p6") == []
