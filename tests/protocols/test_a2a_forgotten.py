"""An A2A task the app no longer remembers (its memory holds one task here) is found again
from the runtime by its id, the run's: completed, failed with its code, waiting for input
(and answered), or still working (and followed to its end)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from _helpers import assert_no_new_threads
from _served import TIMEOUT, served
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part, new_message, new_text_part
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError

from praxo_actors.agent import Interrupt, Tool, new_agent_options
from praxo_actors.models import ModelError, Request, Response, ToolCall, message_assistant
from praxo_actors.protocols import _a2a_app, _a2a_tasks, a2a_app
from praxo_actors.runtime import Runtime
from praxo_actors.testing import FunctionModel
from praxo_actors.testing._eventually import eventually

RELEASE = threading.Event()


def chat(request: Request) -> Response | ModelError:
    """Fail, ask or wait when told; else say what the user said."""
    last = request.messages[-1]
    if last.role == "tool":
        return Response(message_assistant(f"Result: {last.content}."))
    if last.content == "fail":
        return ModelError("MODEL_UNAVAILABLE", "the model is down")
    if last.content == "ask":
        return Response(message_assistant("", [ToolCall("ask", {"q": "colour?"}, id="c1")]))
    if last.content == "wait":
        return Response(message_assistant("", [ToolCall("hold", {}, id="c2")]))
    return Response(message_assistant(f"echo: {last.content}"))


async def hold(_arguments: dict[str, Any]) -> str:
    """Wait until the test lets go (or the run is cancelled)."""
    await asyncio.wait_for(
        asyncio.get_running_loop().run_in_executor(None, RELEASE.wait, TIMEOUT), TIMEOUT
    )
    return "released"


def options() -> Any:
    ask = Tool("ask", "Ask the user", {"type": "object"}, lambda a: Interrupt({"question": a["q"]}))
    hold_tool = Tool("hold", "Hold on", {"type": "object"}, hold)
    return new_agent_options(FunctionModel(chat), tools=[ask, hold_tool])


@pytest.fixture
def url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Serve the agent over A2A, the app remembering one task; stop all after."""
    monkeypatch.setattr(_a2a_app, "Tasks", lambda: _a2a_tasks.Tasks(1))
    before = set(threading.enumerate())
    RELEASE.clear()
    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    try:
        runtime.register_agent("default", options)
        with served(a2a_app(runtime), lifespan="on") as base:
            yield base
    finally:
        RELEASE.set()
        runtime.stop()
    assert_no_new_threads(before, TIMEOUT)


def user(text: str = "", *, context: str = "", task: str = "", data: Any = None) -> Any:
    parts = [new_text_part(text)] if data is None else [new_data_part(data)]
    return new_message(parts, context_id=context or None, task_id=task or None, role=Role.ROLE_USER)


class Talk:
    """An a2a-sdk client of the app."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def send(self, message: Any, *, at_once: bool = False) -> Task:
        config = SendMessageConfiguration(return_immediately=at_once)
        request = SendMessageRequest(message=message, configuration=config)
        items = [item async for item in self.client.send_message(request)]
        assert items[-1].HasField("task"), items
        task: Task = items[-1].task
        return task

    async def forget(self) -> None:
        """Make the app forget every task it remembers (it remembers one: this one's)."""
        task = await self.send(user("hi", context="other"))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED

    async def get(self, task_id: str) -> Task:
        task: Task = await self.client.get_task(GetTaskRequest(id=task_id))
        return task


def talk(url: str, go: Any) -> Any:
    async def main() -> Any:
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            config = ClientConfig(streaming=False, httpx_client=http)
            return await go(Talk(await create_client(url, client_config=config)))

    return asyncio.run(asyncio.wait_for(main(), TIMEOUT))


def output(task: Task) -> str:
    return "\n".join(p.text for a in task.artifacts for p in a.parts if p.HasField("text"))


def test_a_forgotten_completed_task_is_found_by_its_id(url: str) -> None:
    """The task's id is its run's; forgotten, GetTask finds it completed, with its output."""

    async def go(app: Talk) -> tuple[Task, Task]:
        sent = await app.send(user("hello", context="ctx-1"))
        await app.forget()
        return sent, await app.get(sent.id)

    sent, found = talk(url, go)
    assert sent.status.state == TaskState.TASK_STATE_COMPLETED
    assert sent.metadata["praxo.run_id"] == sent.id
    assert found.id == sent.id
    assert found.context_id == "ctx-1"
    assert found.status.state == TaskState.TASK_STATE_COMPLETED
    assert output(found) == output(sent) == "echo: hello"
    assert found.metadata["praxo.run_id"] == sent.id


def test_a_forgotten_failed_task_keeps_its_code_and_context(url: str) -> None:
    """A failed run's task, forgotten, is found failed, its status message saying the code."""

    async def go(app: Talk) -> Task:
        sent = await app.send(user("fail", context="ctx-2"))
        assert sent.status.state == TaskState.TASK_STATE_FAILED
        await app.forget()
        return await app.get(sent.id)

    found = talk(url, go)
    assert found.status.state == TaskState.TASK_STATE_FAILED
    assert found.context_id == "ctx-2"
    assert found.status.message.metadata["praxo.code"] == "MODEL_UNAVAILABLE"
    assert found.status.message.parts[0].text.startswith("MODEL_UNAVAILABLE: ")


def test_a_forgotten_task_waiting_for_input_is_answered_by_its_next_message(url: str) -> None:
    """An interrupted run's task, forgotten, is input-required with its question; the next
    message of the task answers it and the run completes."""

    async def go(app: Talk) -> tuple[Task, Task]:
        sent = await app.send(user("ask", context="ctx-3"))
        assert sent.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        await app.forget()
        found = await app.get(sent.id)
        await app.forget()
        answered = await app.send(user(data="blue", context="ctx-3", task=sent.id))
        return found, answered

    found, answered = talk(url, go)
    assert found.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert found.context_id == "ctx-3"
    data = [p.data for p in found.status.message.parts if p.HasField("data")]
    assert [d.struct_value["question"] for d in data] == ["colour?"]
    assert answered.status.state == TaskState.TASK_STATE_COMPLETED
    assert output(answered) == 'Result: "blue".'


def test_a_forgotten_working_task_is_followed_and_can_be_cancelled(url: str) -> None:
    """A run still going: its task, forgotten, is working (not waited for), then follows the
    run to its end; another, forgotten, is cancelled by CancelTask (its run too)."""

    async def hold_one(app: Talk) -> tuple[str, Task]:
        held = await app.send(user("wait", context="ctx-4"), at_once=True)
        await app.forget()
        return held.id, await app.get(held.id)

    async def get(app: Talk, task_id: str) -> Task:
        return await app.get(task_id)

    held, working = talk(url, hold_one)
    assert working.status.state == TaskState.TASK_STATE_WORKING
    assert working.context_id == "ctx-4"
    RELEASE.set()
    done = eventually(
        lambda: talk(url, lambda app: get(app, held)).status.state == TaskState.TASK_STATE_COMPLETED
    )
    assert done
    assert output(talk(url, lambda app: get(app, held))) == 'Result: "released".'

    RELEASE.clear()

    async def cancel_one(app: Talk) -> tuple[str, Task]:
        other = await app.send(user("wait", context="ctx-5"), at_once=True)
        await app.forget()
        cancelled = await app.client.cancel_task(CancelTaskRequest(id=other.id))
        await app.forget()
        return other.id, cancelled

    other, cancelled = talk(url, cancel_one)
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    # Forgotten again, the task is found from its run: cancelled too.
    eventually(
        lambda: talk(url, lambda app: get(app, other)).status.state == TaskState.TASK_STATE_CANCELED
    )


def test_a_forgotten_working_task_can_be_subscribed_to_its_end(url: str) -> None:
    """SubscribeToTask of a forgotten task still working gives the task, then its end."""

    async def go(app: Talk) -> tuple[Task, list[Any]]:
        held = await app.send(user("wait", context="ctx-6"), at_once=True)
        await app.forget()
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            config = ClientConfig(streaming=True, httpx_client=http)
            client = await create_client(url, client_config=config)
            subscribed = client.subscribe(SubscribeToTaskRequest(id=held.id))
            first = await anext(subscribed)
            RELEASE.set()
            return first.task, [item async for item in subscribed]

    first, rest = talk(url, go)
    assert first.status.state == TaskState.TASK_STATE_WORKING
    assert first.context_id == "ctx-6"
    states = [i.status_update.status.state for i in rest if i.HasField("status_update")]
    assert states == [TaskState.TASK_STATE_COMPLETED]
    texts = [
        p.text
        for i in rest
        if i.HasField("artifact_update")
        for p in i.artifact_update.artifact.parts
    ]
    assert texts == ['Result: "released".']


def test_an_unknown_task_is_not_found(url: str) -> None:
    """An id no run has is TaskNotFound (PROTOCOL_TASK_NOT_FOUND), as before."""

    async def go(app: Talk) -> None:
        with pytest.raises(TaskNotFoundError):
            await app.get("no-such-run")

    talk(url, go)
