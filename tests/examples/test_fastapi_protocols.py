"""The FastAPI example serves AG-UI, A2A, OpenAI and MCP beside its own routes, on one port.

The example runs as ``python examples/fastapi_service.py`` (real uvicorn on a loopback port, a
SQLite store, as in test_fastapi_service.py); each protocol is spoken by its ecosystem's own
client: the ``openai`` SDK, the a2a-sdk client, ``ag-ui-validate`` on the AG-UI stream and the
``mcp`` client over streamable HTTP. A thread, a context, a completion's ``user`` and an MCP
call's ``session_id`` name sessions that the example's own ``/sessions/{id}/history`` shows.
"""

from __future__ import annotations

import asyncio
import json
import runpy
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_message, new_text_part
from a2a.types import Role, SendMessageRequest, TaskState
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.routing import Mount
from test_fastapi_service import (
    EXAMPLE,
    GRACE_RAN_OUT,
    TIMEOUT,
    Server,
    serve,
    user_inputs,
)

VALIDATE = str(Path(sys.executable).with_name("ag-ui-validate"))
MOUNTS = ["/ag-ui", "/a2a", "/openai", "/mcp"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Serve the example for this module; after SIGTERM, check it stopped cleanly."""
    directory = tmp_path_factory.mktemp("protocols")
    with serve(directory, directory / "service.sqlite3") as running:
        yield running
    assert running.process.returncode == -signal.SIGTERM  # uvicorn re-raises the signal
    assert_stopped_cleanly(running)


def assert_stopped_cleanly(server: Server) -> None:
    """Check the server's log: a clean shutdown, with no traceback and time to spare."""
    logged = server.logged()
    assert "Application shutdown complete." in logged, logged
    assert "Traceback" not in logged and GRACE_RAN_OUT not in logged, logged


def validate(target: str) -> dict[str, Any]:
    """Run ``ag-ui-validate`` on a URL or a recording; return its report (no error, no warning)."""
    done = subprocess.run(
        [VALIDATE, target, "--json", "--fail-on", "warning", "--timeout", str(TIMEOUT)],
        capture_output=True,
        timeout=TIMEOUT * 3,
        check=False,
    )
    report: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == 0, report["diagnostics"]
    assert report["summary"]["errors"] == 0 and report["summary"]["warnings"] == 0, report
    assert report["eventCount"] > 0
    return report


def test_the_openai_client_completes_blocking_and_streamed(server: Server) -> None:
    """The openai SDK at /openai/v1 lists the agent, completes, and streams with usage."""
    with openai.OpenAI(
        base_url=server.url + "/openai/v1", api_key="unused", timeout=TIMEOUT, max_retries=0
    ) as client:
        assert [m.id for m in client.models.list()] == ["assistant"]
        done = client.chat.completions.create(
            model="assistant", messages=[{"role": "user", "content": "hello"}], user="oa"
        )
        chunks = list(
            client.chat.completions.create(
                model="assistant",
                messages=[{"role": "user", "content": "again"}],
                user="oa",
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    assert done.choices[0].message.content == "echo: hello"
    assert done.choices[0].finish_reason == "stop"
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert streamed == "echo: again"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    # The completions' user is a session of the example's own routes.
    assert user_inputs(server, "oa") == ["hello", "again"]


async def send_over_a2a(url: str, context_id: str, text: str) -> Any:
    """Send ``text`` with the a2a-sdk client (message/send); return the task it answers."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        config = ClientConfig(streaming=False, httpx_client=http)
        client = await create_client(url, client_config=config)
        message = new_message([new_text_part(text)], context_id=context_id, role=Role.ROLE_USER)
        [item] = [i async for i in client.send_message(SendMessageRequest(message=message))]
    return item.task


def test_the_a2a_client_sends_a_message_and_gets_the_completed_task(server: Server) -> None:
    """The a2a-sdk client finds the card under /a2a; message/send answers the completed task."""
    task = asyncio.run(asyncio.wait_for(send_over_a2a(server.url + "/a2a", "a2a-c", "hi"), TIMEOUT))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    [artifact] = task.artifacts
    assert artifact.name == "output" and artifact.parts[0].text == "echo: hi"
    assert str(artifact.metadata["praxo.run_id"]).startswith("run_")
    assert user_inputs(server, "a2a-c") == ["hi"]


def test_an_ag_ui_post_streams_a_run_the_validator_accepts(server: Server, tmp_path: Path) -> None:
    """POST /ag-ui/ streams the run's events with the client's ids; ag-ui-validate finds no
    error or warning in it, nor in a run of its own against the live endpoint."""
    body = {
        "threadId": "agui-t",
        "runId": "r1",
        "messages": [{"id": "m1", "role": "user", "content": "hello"}],
    }
    with httpx.stream("POST", server.url + "/ag-ui/", json=body, timeout=TIMEOUT) as reply:
        assert reply.status_code == 200, reply.read()
        assert reply.headers["content-type"].startswith("text/event-stream")
        raw = b"".join(reply.iter_bytes())
    recording = tmp_path / "run.sse"
    recording.write_bytes(raw)
    validate(str(recording))
    events = [json.loads(f.removeprefix("data: ")) for f in raw.decode().split("\n\n") if f.strip()]
    assert [e["type"] for e in events] == [
        "RUN_STARTED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]
    assert (events[-1]["threadId"], events[-1]["runId"]) == ("agui-t", "r1")
    assert events[3]["delta"] == "echo: hello"
    assert user_inputs(server, "agui-t") == ["hello"]
    report = validate(server.url + "/ag-ui/")
    assert report["features"]["agentic-chat"] != "not-exercised"


async def call_over_mcp(url: str) -> tuple[list[str], Any]:
    """List the tools and call the agent's with the mcp client over streamable HTTP."""
    async with (
        httpx.AsyncClient(timeout=TIMEOUT) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        tools = [t.name for t in (await client.list_tools()).tools]
        called = await client.call_tool("assistant", {"input": "yo", "session_id": "mcp-s"})
    return tools, called


def test_the_mcp_client_lists_the_agent_and_calls_it(server: Server) -> None:
    """The mcp client at /mcp/ lists one tool per agent and calls it (the session manager runs
    in the example's lifespan)."""
    tools, called = asyncio.run(asyncio.wait_for(call_over_mcp(server.url + "/mcp/"), TIMEOUT))
    assert tools == ["assistant"]
    assert not called.is_error
    answer = called.structured_content
    assert answer is not None
    assert (answer["output"], answer["status"]) == ("echo: yo", "completed")
    assert answer["session_id"] == "mcp-s" and answer["run_id"].startswith("run_")
    assert user_inputs(server, "mcp-s") == ["yo"]


def test_the_examples_own_routes_answer_as_before(server: Server) -> None:
    """A run, its poll, the health check and an unknown path answer as without the protocols."""
    run = server.client.post("/sessions/own/runs", json={"input": "hello"})
    assert run.status_code == 200, run.text
    assert run.json()["output"] == "echo: hello"
    polled = server.client.get(f"/runs/{run.json()['run_id']}")
    assert polled.status_code == 200 and polled.json()["output"] == "echo: hello"
    assert server.client.get("/healthz").json()["status"] == "ok"
    # The mounts come after the routes and shadow nothing: an unknown path is still the
    # example's own JSON 404.
    missing = server.client.get("/nowhere")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "HTTP_404"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/ag-ui/"),
        ("GET", "/a2a/.well-known/agent-card.json"),
        ("GET", "/openai/v1/models"),
        ("POST", "/mcp/"),
    ],
)
def test_each_protocol_refuses_a_foreign_host(server: Server, method: str, path: str) -> None:
    """A request naming another Host (a rebound DNS name) is 421 PROTOCOL_HOST_REFUSED."""
    reply = httpx.request(
        method, server.url + path, headers={"Host": "evil.example"}, json={}, timeout=TIMEOUT
    )
    assert reply.status_code == 421, reply.text
    assert reply.json()["error"]["code"] == "PROTOCOL_HOST_REFUSED"


def test_sigterm_ends_an_ag_ui_run_in_flight_with_run_error_and_stops_at_once(
    tmp_path: Path,
) -> None:
    """A protocol's run is not one the drain waits for: at SIGTERM the runtime stops, the AG-UI
    stream ends with RUN_ERROR RUNTIME_STOPPED, and the server exits within its bound."""
    body = {
        "threadId": "cut",
        "runId": "r1",
        "messages": [{"id": "m1", "role": "user", "content": "hello"}],
    }
    # The model call outlasts the test's bounds: only the stop can end the run.
    with serve(tmp_path, tmp_path / "s.sqlite3", PRAXO_MODEL_LATENCY="60") as server:
        with httpx.stream("POST", server.url + "/ag-ui/", json=body, timeout=TIMEOUT) as reply:
            events = []
            for line in reply.iter_lines():
                if line.startswith("data: "):
                    events.append(json.loads(line.removeprefix("data: ")))
                    if events[-1]["type"] == "STEP_STARTED":
                        server.terminate()
        assert server.wait() == -signal.SIGTERM
    assert [e["type"] for e in events][:2] == ["RUN_STARTED", "STEP_STARTED"]
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "RUNTIME_STOPPED"
    assert_stopped_cleanly(server)


def test_each_lifespan_mounts_the_protocols_and_unmounts_them(no_thread_leaks: None) -> None:
    """Run twice in process, the lifespan mounts fresh apps after the routes, and removes them."""
    app = runpy.run_path(str(EXAMPLE))["create_app"](None)

    def mounted() -> list[str]:
        return [r.path for r in app.routes if isinstance(r, Mount)]

    async def one_lifespan() -> list[str]:
        async with app.router.lifespan_context(app):
            assert mounted() == MOUNTS
            assert not isinstance(app.routes[-len(MOUNTS) - 1], Mount)  # after the routes
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                models = await c.get("/openai/v1/models")
        assert models.status_code == 200, models.text
        return [m["id"] for m in models.json()["data"]]

    assert mounted() == []
    for _ in range(2):
        assert asyncio.run(asyncio.wait_for(one_lifespan(), TIMEOUT)) == ["assistant"]
        assert mounted() == []
