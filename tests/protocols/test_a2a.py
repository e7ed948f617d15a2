"""The A2A app over real HTTP, driven by the a2a-sdk's own client."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from _helpers import assert_no_new_threads
from _served import TIMEOUT
from _served import served as on_loopback
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part, new_message, new_text_part
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)

from praxo_actors.agent import Interrupt, Tool, new_agent_options
from praxo_actors.middleware import require_approval
from praxo_actors.models import ModelError, Request, Response, ToolCall, message_assistant
from praxo_actors.protocols import a2a_app
from praxo_actors.runtime import Runtime
from praxo_actors.testing import FunctionModel

RELEASE = threading.Event()


def chat(request: Request) -> Response | ModelError:
    """Add, ask, fail or wait when told; else tell what the model saw."""
    last = request.messages[-1]
    if last.role == "tool":
        return Response(message_assistant(f"Result: {last.content}."))
    if last.content == "fail":
        return ModelError("MODEL_UNAVAILABLE", "the model is down")
    if last.content == "add":
        return Response(message_assistant("", [ToolCall("add", {"a": 2, "b": 3}, id="c1")]))
    if last.content == "ask":
        return Response(message_assistant("", [ToolCall("ask", {"q": "colour?"}, id="c2")]))
    if last.content == "wait":
        return Response(message_assistant("", [ToolCall("hold", {}, id="c3")]))
    seen = " | ".join(f"{m.role}:{m.content}" for m in request.messages)
    return Response(message_assistant(seen))


async def hold(_arguments: dict[str, Any]) -> str:
    """Wait until the test lets go (or is cancelled)."""
    await asyncio.wait_for(
        asyncio.get_running_loop().run_in_executor(None, RELEASE.wait, TIMEOUT), TIMEOUT
    )
    return "released"


def options(approval: bool = False) -> Any:
    add = Tool("add", "Add two numbers", {"type": "object"}, lambda a: a["a"] + a["b"])
    ask = Tool("ask", "Ask the user", {"type": "object"}, lambda a: Interrupt({"question": a["q"]}))
    hold_tool = Tool("hold", "Hold on", {"type": "object"}, hold)
    gate = require_approval(["add"]) if approval else None
    return new_agent_options(FunctionModel(chat), tools=[add, ask, hold_tool], approval=gate)


@dataclass
class Served:
    runtime: Runtime
    url: str


@pytest.fixture
def served() -> Iterator[Served]:
    """Serve the agents "default" and "careful" over A2A; stop all after."""
    before = set(threading.enumerate())
    RELEASE.clear()
    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    try:
        runtime.register_agent("default", options)
        runtime.register_agent("careful", lambda: options(approval=True))
        from starlette.applications import Starlette
        from starlette.routing import Mount

        app = Starlette(
            routes=[
                Mount("/careful", a2a_app(runtime, agent="careful")),
                Mount("/", a2a_app(runtime)),
            ]
        )
        with on_loopback(app, lifespan="on") as url:
            yield Served(runtime, url)
    finally:
        RELEASE.set()
        runtime.stop()
    assert_no_new_threads(before, TIMEOUT)


def user(text: str = "", *, context: str = "", task: str = "", data: Any = None) -> Any:
    parts = [new_text_part(text)] if data is None else [new_data_part(data)]
    return new_message(parts, context_id=context or None, task_id=task or None, role=Role.ROLE_USER)


async def send(url: str, message: Any, *, streaming: bool) -> list[StreamResponse]:
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        config = ClientConfig(streaming=streaming, httpx_client=http)
        client = await create_client(url, client_config=config)
        request = SendMessageRequest(message=message)
        return [item async for item in client.send_message(request)]


async def with_client(url: str) -> AsyncIterator[Any]:
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        yield await create_client(url, client_config=ClientConfig(httpx_client=http))


def last_task(items: list[StreamResponse]) -> Task:
    assert items[-1].HasField("task"), items
    return items[-1].task


def output(task: Task) -> str:
    return "\n".join(p.text for a in task.artifacts for p in a.parts if p.HasField("text"))


def test_send_runs_the_message_in_the_context_session(served: Served) -> None:
    """message/send answers with the completed task; the context is the session."""

    async def go() -> None:
        first = last_task(await send(served.url, user("hello", context="ctx-1"), streaming=False))
        assert first.status.state == TaskState.TASK_STATE_COMPLETED
        assert output(first).endswith("user:hello")
        second = last_task(await send(served.url, user("again", context="ctx-1"), streaming=False))
        # The session kept the first exchange: only the new message was sent.
        assert output(second) == "user:hello | assistant:user:hello | user:again"
        assert second.context_id == "ctx-1" and second.id != first.id

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))
    assert len(served.runtime.session("ctx-1", "default").history()) == 4


def test_stream_publishes_the_task_states_and_output(served: Served) -> None:
    """message/stream gives the task, working, the output artifact and completed."""

    async def go() -> list[StreamResponse]:
        return await send(served.url, user("add", context="ctx-2"), streaming=True)

    items = asyncio.run(asyncio.wait_for(go(), TIMEOUT))
    assert items[0].HasField("task")
    states = [i.status_update.status.state for i in items if i.HasField("status_update")]
    assert states == [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]
    artifacts = [i.artifact_update.artifact for i in items if i.HasField("artifact_update")]
    assert [p.text for p in artifacts[0].parts] == ["Result: 5."]


def test_get_finds_the_task_by_its_run_id(served: Served) -> None:
    """tasks/get takes the run's id (the task's metadata names it) as well as the task's."""

    async def go() -> None:
        task = last_task(await send(served.url, user("hi", context="ctx-3"), streaming=False))
        run_id = task.metadata["praxo.run_id"]
        result = served.runtime.session("ctx-3").result(run_id)
        assert result.output == output(task)
        async for client in with_client(served.url):
            by_run = await client.get_task(GetTaskRequest(id=run_id))
            by_task = await client.get_task(GetTaskRequest(id=task.id))
            assert by_run.id == by_task.id == task.id
            assert by_run.status.state == TaskState.TASK_STATE_COMPLETED

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))


def test_an_interrupt_is_input_required_answered_by_the_next_message(served: Served) -> None:
    """A tool's Interrupt makes the task input-required; its next message resumes the run."""

    async def go() -> None:
        asked = last_task(await send(served.url, user("ask", context="ctx-4"), streaming=False))
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        data = [p for p in asked.status.message.parts if p.HasField("data")]
        assert data and data[0].data.struct_value["question"] == "colour?"
        answer = user("blue", context="ctx-4", task=asked.id)
        done = last_task(await send(served.url, answer, streaming=False))
        assert done.id == asked.id
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert output(done) == 'Result: "blue".'  # the answer, as the tool's JSON result

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))


def test_an_approval_is_input_required_and_streams_its_resume(served: Served) -> None:
    """An approval asks for input (again, after an unclear answer); a data part resumes the run."""

    async def go() -> None:
        url = served.url + "/careful/"
        asked = last_task(await send(url, user("add", context="ctx-5"), streaming=False))
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        run_id = asked.metadata["praxo.run_id"]
        unclear = last_task(
            await send(url, user("sure", context="ctx-5", task=asked.id), streaming=False)
        )
        assert unclear.status.state == TaskState.TASK_STATE_INPUT_REQUIRED  # still asking
        assert unclear.status.message.metadata["praxo.code"] == "AGENT_INVALID_RESUME"
        assert [p for p in unclear.status.message.parts if p.HasField("data")]
        answer = user(context="ctx-5", task=asked.id, data={"approved": True})
        items = await send(url, answer, streaming=True)
        states = [i.status_update.status.state for i in items if i.HasField("status_update")]
        assert states[-1] == TaskState.TASK_STATE_COMPLETED
        async for client in with_client(url):
            done = await client.get_task(GetTaskRequest(id=run_id))
            assert output(done) == "Result: 5."

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))


def test_a_failed_run_is_a_failed_task_with_its_code(served: Served) -> None:
    """A run that fails is a failed task; its status message carries the code."""

    async def go() -> Task:
        return last_task(await send(served.url, user("fail", context="ctx-6"), streaming=False))

    task = asyncio.run(asyncio.wait_for(go(), TIMEOUT))
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert task.status.message.metadata["praxo.code"] == "MODEL_UNAVAILABLE"
    assert task.status.message.parts[0].text.startswith("MODEL_UNAVAILABLE: ")


def test_a_context_that_cannot_be_a_session_fails_with_its_code(served: Served) -> None:
    """A context id the runtime refuses as a session id is a failed task with the code."""

    async def go() -> Task:
        return last_task(await send(served.url, user("hi", context="bad\x00id"), streaming=False))

    task = asyncio.run(asyncio.wait_for(go(), TIMEOUT))
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert task.status.message.metadata["praxo.code"] == "RUNTIME_INVALID_INPUT"


def test_cancel_cancels_the_run(served: Served) -> None:
    """tasks/cancel by the run's id cancels the run in flight: the task is canceled."""

    async def go() -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            config = ClientConfig(streaming=True, httpx_client=http)
            client = await create_client(served.url, client_config=config)
            stream = client.send_message(SendMessageRequest(message=user("wait", context="ctx-7")))
            run_id = ""
            async for item in stream:
                if item.HasField("status_update") and "praxo.run_id" in item.status_update.metadata:
                    run_id = item.status_update.metadata["praxo.run_id"]
                    break
            assert run_id
            canceled = await client.cancel_task(CancelTaskRequest(id=run_id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            await stream.aclose()
        with pytest.raises(Exception) as caught:
            await served.runtime.session("ctx-7").aresult(run_id, timeout=TIMEOUT)
        assert getattr(caught.value, "code", None) == "AGENT_CANCELLED"

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))


def test_cancelling_a_task_waiting_for_input_leaves_the_run_to_the_runtime(served: Served) -> None:
    """A task waiting for input is canceled; its run stays interrupted, answered by the runtime."""

    async def go() -> None:
        asked = last_task(await send(served.url, user("ask", context="ctx-8"), streaming=False))
        async for client in with_client(served.url):
            canceled = await client.cancel_task(CancelTaskRequest(id=asked.id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        blocked = last_task(await send(served.url, user("hi", context="ctx-8"), streaming=False))
        assert blocked.status.message.metadata["praxo.code"] == "SESSION_INTERRUPTED"
        resumed = await served.runtime.session("ctx-8").aresume("red")
        assert resumed.output == 'Result: "red".'

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))


def test_the_card_lists_the_tools_as_skills(served: Served) -> None:
    """The agent card names the agent's tools as skills and the URL it was fetched from."""
    card = httpx.get(served.url + "/.well-known/agent-card.json", timeout=TIMEOUT).json()
    assert [s["id"] for s in card["skills"]] == ["add", "ask", "hold"]
    assert card["supportedInterfaces"][0]["url"] == served.url + "/"
    assert card["capabilities"]["streaming"] is True


def test_a_foreign_host_and_hostile_input_are_4xx(served: Served) -> None:
    """A foreign Host is 421 with a code; a body that is not JSON-RPC is never a 500."""
    refused = httpx.post(
        served.url + "/", headers={"Host": "evil.example"}, content=b"{}", timeout=TIMEOUT
    )
    assert refused.status_code == 421
    assert refused.json()["error"]["code"] == "PROTOCOL_HOST_REFUSED"
    for body in (
        b"not json",
        b"[" * 100_000,
        b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": 5}}',
        b'{"jsonrpc":"2.0","id":1,"method":"nope"}',
    ):
        answer = httpx.post(
            served.url + "/",
            content=body,
            headers={"Content-Type": "application/json"},
            timeout=TIMEOUT,
        )
        assert answer.status_code < 500, (body[:40], answer.status_code, answer.text)
        assert "error" in answer.json()
