"""The four protocol apps over a ``ClusterRuntime``, each talked to by its own client on loopback.

A two-node Ray cluster with two session hosts on PostgreSQL; the apps are served by uvicorn in
this process. AG-UI streams pass ``ag-ui-validate``; the OpenAI, A2A and MCP clients are the
real ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from _a2a_client import a2a_ended, a2a_rpc

from praxo_actors import PraxoError
from praxo_actors.cluster import ClusterRuntime
from praxo_actors.testing._served import served as serve_on_loopback

ray = pytest.importorskip("ray")
pytest.importorskip("ag_ui")
pytest.importorskip("a2a")
pytest.importorskip("mcp")
openai = pytest.importorskip("openai")
pytestmark = pytest.mark.timeout(900)

TIMEOUT = 120.0  # a busy machine (see test_cluster.py)
VALIDATE = str(Path(sys.executable).with_name("ag-ui-validate"))


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """Two Ray nodes (the folder's default is three)."""
    from praxo_actors.testing._ray import local_ray_cluster

    with local_ray_cluster(nodes=2, path=[str(Path(__file__).parent)]) as cluster:
        yield cluster


def served(
    app: Any, lifespan: Literal["auto", "on", "off"] = "off"
) -> contextlib.AbstractContextManager[str]:
    """Serve ``app`` on loopback; a cluster app may take longer to stop than a local one."""
    return serve_on_loopback(app, lifespan, stop_timeout=30.0)


def validate(recording: Path) -> None:
    """Run ``ag-ui-validate`` on a recorded stream: no error, no warning."""
    done = subprocess.run(
        [VALIDATE, str(recording), "--json", "--fail-on", "warning", "--timeout", "30"],
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    report = json.loads(done.stdout)
    assert done.returncode == 0, report["diagnostics"]
    assert report["summary"]["errors"] == 0 and report["summary"]["warnings"] == 0, report
    assert report["eventCount"] > 0


def ag_ui_post(url: str, body: dict[str, Any], tmp: Path) -> list[dict[str, Any]]:
    """POST a RunAgentInput; validate the recorded stream; return its events."""
    with httpx.stream("POST", url + "/", json=body, timeout=TIMEOUT) as reply:
        assert reply.status_code == 200, reply.read()
        raw = b"".join(reply.iter_bytes())
    recording = tmp / f"{body['runId']}.sse"
    recording.write_bytes(raw)
    validate(recording)
    frames = [f for f in raw.decode().split("\n\n") if f.strip()]
    return [json.loads(f.removeprefix("data: ")) for f in frames]


@pytest.fixture
def cluster(ray_cluster: Any, cluster_store: Any) -> Iterator[ClusterRuntime]:
    dsn, schema = cluster_store
    cluster = ClusterRuntime.start(dsn, hosts=2, schema=schema, idle_timeout=None, timeout=TIMEOUT)
    try:
        cluster.register_agent("default", "cluster_agents:echo")
        cluster.register_agent("careful", "cluster_agents:approving")
        cluster.register_agent("held", "cluster_agents:held")
        cluster.register_agent("asking", "_protocol_agents:asking")
        yield cluster
    finally:
        cluster.stop()


def test_each_protocol_app_serves_a_cluster(cluster: ClusterRuntime, tmp_path: Path) -> None:
    from praxo_actors.protocols import a2a_app, ag_ui_app, mcp_server, openai_app

    with contextlib.ExitStack() as stack:
        ag_ui = stack.enter_context(served(ag_ui_app(cluster)))
        careful = stack.enter_context(served(ag_ui_app(cluster, agent="careful")))
        asking = stack.enter_context(served(ag_ui_app(cluster, agent="asking")))
        chat = stack.enter_context(served(openai_app(cluster)))
        a2a = stack.enter_context(served(a2a_app(cluster), lifespan="on"))
        held = stack.enter_context(served(a2a_app(cluster, agent="held"), lifespan="on"))
        flag = tmp_path / "flag"  # the held run waits for it (bounded): made at the latest here
        stack.callback(flag.touch)
        tools = stack.enter_context(
            served(mcp_server(cluster).streamable_http_app(), lifespan="on")
        )

        # AG-UI: a run's events come from the session's host, and validate.
        body = {
            "threadId": "t1",
            "runId": "r1",
            "messages": [{"id": "m1", "role": "user", "content": "hi"}],
        }
        events = ag_ui_post(ag_ui, body, tmp_path)
        said = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
        assert said == "echo: hi"
        assert events[-1]["type"] == "RUN_FINISHED"

        # The client's own tools: an agent derived on every host offers them beside its own.
        lookup = {"name": "lookup", "description": "Look up", "parameters": {"type": "object"}}
        body = {**body, "runId": "r1b", "tools": [lookup]}
        events = ag_ui_post(ag_ui, body, tmp_path)
        said = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
        assert said == "echo: hi" and events[-1]["type"] == "RUN_FINISHED"
        assert any("~" in name for name in cluster.agents())

        # A call to a client's tool ends the run pending; the tool message resumes it on its host.
        confirm = {"name": "confirm", "description": "Ask", "parameters": {"type": "object"}}
        first = [{"id": "m1", "role": "user", "content": "confirm it"}]
        body = {"threadId": "t3", "runId": "r5", "messages": first, "tools": [confirm]}
        events = ag_ui_post(asking, body, tmp_path)
        assert events[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["c1"]}
        call = {"id": "c1", "type": "function", "function": {"name": "confirm", "arguments": "{}"}}
        answered = [
            *first,
            {"id": "a1", "role": "assistant", "toolCalls": [call]},
            {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "yes, go"},
        ]
        body = {"threadId": "t3", "runId": "r6", "messages": answered, "tools": [confirm]}
        events = ag_ui_post(asking, body, tmp_path)
        said = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
        assert said == ["result: yes, go"] and events[-1]["type"] == "RUN_FINISHED"

        # AG-UI: an approval interrupts the run; a resume entry goes on with it, on its host.
        ask = {"id": "m1", "role": "user", "content": "mail ada"}
        events = ag_ui_post(careful, {"threadId": "t2", "runId": "r2", "messages": [ask]}, tmp_path)
        [interrupt] = events[-1]["outcome"]["interrupts"]
        assert interrupt["reason"] == "approval" and interrupt["toolCallId"] == "c1"
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": True}]
        body = {"threadId": "t2", "runId": "r3", "messages": [ask], "resume": resume}
        events = ag_ui_post(careful, body, tmp_path)
        assert [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"] == [
            '"sent to ada"'
        ]
        assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
        assert events[-1]["outcome"]["type"] == "success"
        said = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
        assert said == 'result: "sent to ada"'
        # Nothing waits any more: the resume's own code, as a RUN_ERROR that validates.
        body = {"threadId": "t2", "runId": "r4", "messages": [ask], "resume": resume}
        events = ag_ui_post(careful, body, tmp_path)
        assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] != "PROTOCOL_RUN_LOST"

        # OpenAI: blocking, and streamed with usage, by the openai client.
        client = openai.OpenAI(base_url=chat + "/v1", api_key="none", max_retries=0)
        user = {"role": "user", "content": "hello"}
        done = client.chat.completions.create(model="default", messages=[user])
        assert done.choices[0].message.content == "echo: hello"
        stream = client.chat.completions.create(
            model="default", messages=[user], stream=True, stream_options={"include_usage": True}
        )
        chunks = list(stream)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == "echo: hello" and chunks[-1].usage is not None
        # A conversation without a session cannot be seeded on the hosts: a 400 with its code.
        earlier = [{"role": "assistant", "content": "before"}, user]
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(model="default", messages=earlier)
        assert refused.value.code == "PROTOCOL_NOT_ON_CLUSTER"
        # With a session, the session keeps the conversation on its host.
        kept = client.chat.completions.create(model="default", messages=earlier, user="s-oa")
        assert kept.choices[0].message.content == "echo: hello"
        assert [m.content for m in cluster.session("s-oa").history()] == ["hello", "echo: hello"]

        # A2A: the a2a-sdk client sends a message; the task completes with the output.
        asyncio.run(asyncio.wait_for(a2a_send(a2a), TIMEOUT))
        # A run in flight on a cluster cannot be cancelled: refused with its code, not hung.
        message = {"messageId": "m9", "role": "ROLE_USER", "parts": [{"text": str(flag)}]}
        sent = a2a_rpc(
            held, "SendMessage", {"message": message, "configuration": {"returnImmediately": True}}
        )
        task = sent["result"]["task"]
        error = a2a_rpc(held, "CancelTask", {"id": task["id"]})["error"]
        assert error["code"] == -32002
        assert error["data"][0]["metadata"]["praxo.code"] == "PROTOCOL_NOT_ON_CLUSTER"
        flag.touch()  # the run goes on, and the task completes
        ended = a2a_ended(held, task["id"])
        assert ended["status"]["state"] == "TASK_STATE_COMPLETED"
        assert ended["artifacts"][0]["parts"][0]["text"] == 'held: "attempt 1"'
        run_id = ended["metadata"]["praxo.run_id"]
        assert cluster.result(run_id, timeout=TIMEOUT).output == 'held: "attempt 1"'

        # MCP: the mcp client calls an agent's tool over streamable HTTP.
        answer = asyncio.run(asyncio.wait_for(mcp_call(tools), TIMEOUT))
        assert answer["output"] == "echo: yo" and answer["status"] == "completed"
        assert cluster.result(answer["run_id"], timeout=TIMEOUT).output == "echo: yo"


async def a2a_send(url: str) -> None:
    from a2a.client import ClientConfig, create_client
    from a2a.helpers.proto_helpers import new_message, new_text_part
    from a2a.types import Role, SendMessageRequest, TaskState

    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        config = ClientConfig(streaming=False, httpx_client=http)
        client = await create_client(url, client_config=config)
        message = new_message([new_text_part("hi")], context_id="c1", role=Role.ROLE_USER)
        [item] = [i async for i in client.send_message(SendMessageRequest(message=message))]
        assert item.task.status.state == TaskState.TASK_STATE_COMPLETED
        assert item.task.artifacts[0].parts[0].text == "echo: hi"


async def mcp_call(url: str) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx.AsyncClient(timeout=TIMEOUT) as http,
        Client(streamable_http_client(url + "/mcp", http_client=http)) as client,
    ):
        called = await client.call_tool("default", {"input": "yo"})
        assert not called.is_error, called
        structured: dict[str, Any] = called.structured_content or {}
        return structured


def test_the_apps_refuse_what_is_no_runtime() -> None:
    from praxo_actors.protocols import a2a_app, ag_ui_app, mcp_server, openai_app

    for build in (ag_ui_app, openai_app, a2a_app, mcp_server):
        with pytest.raises(PraxoError) as info:
            build(object())  # type: ignore[operator]
        assert info.value.code == "RUNTIME_INVALID_INPUT"


class _Resumed:
    """A resume's future: the interrupted run's id, settled when the test says."""

    def __init__(self) -> None:
        self.run_id = "r1"
        self.done = asyncio.get_running_loop().create_future()

    def __await__(self) -> Any:
        return self.done.__await__()


def test_a_resumed_stream_starts_at_run_resumed_and_keeps_order() -> None:
    """The interrupted run's own events (same id, lower or equal ``seq``) are not the resumed
    run's; events ahead of ``run.resumed`` wait for it."""
    from types import SimpleNamespace

    from praxo_actors.cluster import ClusterRunStream
    from praxo_actors.models import Event

    async def go() -> list[tuple[str, int]]:
        subscribed: list[Any] = []
        events = SimpleNamespace(subscribe=lambda cb, *_a: subscribed.append(cb) or (lambda: None))
        session = SimpleNamespace(id="s", cluster=SimpleNamespace(events=events))
        future = _Resumed()
        stream = ClusterRunStream(session, "", None, 100, resume=lambda: future)  # type: ignore[arg-type]

        def event(kind: str, seq: int) -> Event:
            return Event(type=kind, run_id="r1", session_id="s", seq=seq, time_ns=0)

        for made in [
            event("run.started", 0),  # the interrupted run's, told again
            event("run.interrupted", 3),
            event("tool.completed", 4),  # the resumed run's, ahead of its first
            event("run.resumed", 3),
            event("run.completed", 5),
        ]:
            stream._put(made)
        seen = [(e.type, e.seq) async for e in stream]
        future.done.set_result(SimpleNamespace(output="ok"))
        assert (await stream.result()).output == "ok"
        return seen

    seen = asyncio.run(asyncio.wait_for(go(), TIMEOUT))
    assert seen == [("run.resumed", 3), ("tool.completed", 4), ("run.completed", 5)]
