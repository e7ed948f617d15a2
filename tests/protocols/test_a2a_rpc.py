"""The A2A app's JSON-RPC at its edges: hostile input, tasks that take no message, and
``SubscribeToTask``, over real HTTP (the a2a-sdk's client where a client would be used)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from _helpers import assert_no_new_threads
from _served import TIMEOUT
from _served import served as on_loopback
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_message, new_text_part
from a2a.types import (
    CancelTaskRequest,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)

from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.protocols import a2a_app
from praxo_actors.protocols._http import MAX_BODY
from praxo_actors.runtime import Runtime

RELEASE = threading.Event()
ENTERED = threading.Event()


def chat(request: Request) -> Response:
    """Hold on when told to wait; else echo."""
    last = request.messages[-1]
    if last.role == "tool":
        return Response(message_assistant(f"Result: {last.content}."))
    if last.content == "wait":
        return Response(message_assistant("", [ToolCall("hold", {}, id="c1")]))
    return Response(message_assistant(f"echo: {last.content}"))


async def hold(_arguments: dict[str, Any]) -> str:
    """Wait until the test lets go (or is cancelled)."""
    ENTERED.set()
    await asyncio.wait_for(
        asyncio.get_running_loop().run_in_executor(None, RELEASE.wait, TIMEOUT), TIMEOUT
    )
    return "released"


@dataclass
class Served:
    runtime: Runtime
    url: str


@pytest.fixture
def served() -> Iterator[Served]:
    before = set(threading.enumerate())
    RELEASE.clear()
    ENTERED.clear()
    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    try:
        hold_tool = Tool("hold", "Hold on", {"type": "object"}, hold)
        runtime.register_agent("default", lambda: new_agent_options(chat, tools=[hold_tool]))
        with on_loopback(a2a_app(runtime), lifespan="on") as url:
            yield Served(runtime, url)
    finally:
        RELEASE.set()
        runtime.stop()
    assert_no_new_threads(before, TIMEOUT)


def post(url: str, body: bytes, version: str = "1.0") -> httpx.Response:
    headers = {"Content-Type": "application/json", "A2A-Version": version}
    return httpx.post(url + "/", content=body, headers=headers, timeout=TIMEOUT)


def error_of(answer: httpx.Response) -> tuple[int, str]:
    """The JSON-RPC error's code and the code in its details."""
    error = answer.json()["error"]
    return error["code"], error["data"][0]["metadata"]["praxo.code"]


def test_hostile_input_is_4xx_with_its_code(served: Served) -> None:
    """What is not a JSON-RPC request of the protocol is a 4xx naming its code."""
    cases = [
        (b"not json", 400, -32700, "PROTOCOL_BAD_JSON"),
        (b"[" * 100_000, 400, -32700, "PROTOCOL_BAD_JSON"),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}]', 400, -32600, "PROTOCOL_BAD_JSON"),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "GetTask"}', 400, -32600, "PROTOCOL_BAD_JSON"),
        (b'{"jsonrpc": "2.0", "id": true, "method": "GetTask"}', 400, -32600, "PROTOCOL_BAD_JSON"),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": 5}}',
            400,
            -32602,
            "PROTOCOL_INVALID_INPUT",
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}',
            400,
            -32602,
            "PROTOCOL_INVALID_INPUT",
        ),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "nope"}', 400, -32601, "PROTOCOL_INVALID_INPUT"),
        (b" " * (MAX_BODY + 1), 413, -32600, "PROTOCOL_TOO_LARGE"),
    ]
    for body, status, rpc, code in cases:
        answer = post(served.url, body)
        assert answer.status_code == status, (body[:40], answer.text)
        assert error_of(answer) == (rpc, code), body[:40]


def test_a_client_of_another_version_is_refused(served: Served) -> None:
    """Without ``A2A-Version: 1.x`` (0.3 then), a method is refused with the SDK's code."""
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "x"}}'
    answer = post(served.url, body, version="0.3")
    assert answer.status_code == 200
    assert answer.json()["id"] == 7
    assert error_of(answer) == (-32009, "PROTOCOL_VERSION_NOT_SUPPORTED")


def user(text: str, *, context: str = "", task: str = "") -> Any:
    parts = [new_text_part(text)]
    return new_message(parts, context_id=context or None, task_id=task or None, role=Role.ROLE_USER)


def test_a_message_to_an_unknown_or_ended_task_is_refused(served: Served) -> None:
    """A message naming a task that does not exist, or has ended, is an error, not a run."""

    async def go() -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            config = ClientConfig(streaming=False, httpx_client=http)
            client = await create_client(served.url, client_config=config)
            with pytest.raises(Exception, match="does not exist"):
                async for _ in client.send_message(
                    SendMessageRequest(message=user("hi", task="nope"))
                ):
                    pass
            [done] = [i async for i in client.send_message(SendMessageRequest(message=user("hi")))]
            assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
            again = user("more", context=done.task.context_id, task=done.task.id)
            with pytest.raises(Exception, match="terminal state"):
                async for _ in client.send_message(SendMessageRequest(message=again)):
                    pass
            with pytest.raises(Exception, match="cannot be canceled"):
                await client.cancel_task(CancelTaskRequest(id=done.task.id))
        history = served.runtime.session(done.task.context_id).history()
        assert [m.content for m in history] == ["hi", "echo: hi"]  # the refused ones never ran

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))


def test_subscribe_follows_a_running_task_to_its_end(served: Served) -> None:
    """SubscribeToTask gives the task, then its updates until it ends (here: cancelled)."""

    async def go() -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            config = ClientConfig(streaming=True, httpx_client=http)
            client = await create_client(served.url, client_config=config)
            request = SendMessageRequest(message=user("wait", context="sub-1"))
            stream = client.send_message(request)
            task_id = ""
            async for item in stream:
                if item.HasField("status_update"):
                    task_id = item.status_update.task_id
                    break
            assert task_id
            subscribed = client.subscribe(SubscribeToTaskRequest(id=task_id))
            first = await anext(subscribed)
            assert first.task.id == task_id
            assert first.task.status.state == TaskState.TASK_STATE_WORKING
            canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            rest = [item async for item in subscribed]
            states = [i.status_update.status.state for i in rest if i.HasField("status_update")]
            assert states == [TaskState.TASK_STATE_CANCELED]
            await stream.aclose()

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))


def test_return_immediately_answers_before_the_run_ends(served: Served) -> None:
    """``returnImmediately`` answers with the task in flight; cancelling it cancels the run."""

    async def go() -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            config = ClientConfig(streaming=False, httpx_client=http)
            client = await create_client(served.url, client_config=config)
            request = SendMessageRequest(message=user("wait", context="now-1"))
            request.configuration.return_immediately = True
            [item] = [i async for i in client.send_message(request)]
            assert item.task.status.state in (
                TaskState.TASK_STATE_SUBMITTED,
                TaskState.TASK_STATE_WORKING,
            )
            loop = asyncio.get_running_loop()
            assert await loop.run_in_executor(None, ENTERED.wait, TIMEOUT)  # the run is on
            canceled = await client.cancel_task(CancelTaskRequest(id=item.task.id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            run_id = canceled.metadata["praxo.run_id"]
        with pytest.raises(Exception) as caught:
            await served.runtime.session("now-1").aresult(run_id, timeout=TIMEOUT)
        assert getattr(caught.value, "code", None) == "AGENT_CANCELLED"

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))
