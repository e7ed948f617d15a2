"""An A2A task acknowledged before the serving process stopped (SIGTERM) or was killed
(SIGKILL) is found by its id after a restart on the same store: its run's outcome, kept by
the runtime, is the task's (completed with its output, or failed with its code)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from _served import CHILD_TIMEOUT as TIMEOUT
from _served import free_port, wait_until_serving
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_message, new_text_part
from a2a.types import GetTaskRequest, Role, SendMessageRequest, Task, TaskState
from a2a.utils.errors import TaskNotFoundError

CHILD = Path(__file__).with_name("_a2a_durable_child.py")
ROOT = Path(__file__).parents[2]


@contextmanager
def child(store: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Serve the A2A app over ``store`` in a child process; yield it and its URL; kill it
    after if it still runs."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, str(CHILD), str(port), str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        wait_until_serving(process, url + "/.well-known/agent-card.json", TIMEOUT)
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=TIMEOUT)


async def send_both(url: str) -> list[Task]:
    """Send a message that completes and one that fails; return their tasks."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        config = ClientConfig(streaming=False, httpx_client=http)
        client = await create_client(url, client_config=config)
        tasks = []
        for context, text in (("ctx-ok", "hello"), ("ctx-bad", "fail")):
            message = new_message([new_text_part(text)], context_id=context, role=Role.ROLE_USER)
            [item] = [i async for i in client.send_message(SendMessageRequest(message=message))]
            tasks.append(item.task)
        return tasks


async def get_all(url: str, ids: list[str]) -> list[Task]:
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        client = await create_client(url, client_config=ClientConfig(httpx_client=http))
        found = [await client.get_task(GetTaskRequest(id=task_id)) for task_id in ids]
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-run"))
        return found


def output(task: Task) -> str:
    return "\n".join(p.text for a in task.artifacts for p in a.parts if p.HasField("text"))


@pytest.mark.parametrize("cut", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_task_is_found_after_the_server_restarts(tmp_path: Path, cut: signal.Signals) -> None:
    """Tasks answered before the cut are found after the restart by their ids: the completed
    one with the same output, the failed one with its code, each in its context."""
    store = tmp_path / "a2a.sqlite3"
    with child(store) as (process, url):
        sent = asyncio.run(asyncio.wait_for(send_both(url), TIMEOUT))
        process.send_signal(cut)
        assert process.wait(TIMEOUT) == (0 if cut == signal.SIGTERM else -cut)
    done, failed = sent
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert failed.status.state == TaskState.TASK_STATE_FAILED

    with child(store) as (_, url):
        found = asyncio.run(asyncio.wait_for(get_all(url, [done.id, failed.id]), TIMEOUT))
    again, failed_again = found
    assert again.id == done.id
    assert again.context_id == "ctx-ok"
    assert again.status.state == TaskState.TASK_STATE_COMPLETED
    assert output(again) == output(done) == "echo: hello"
    assert again.metadata["praxo.run_id"] == done.id
    assert failed_again.id == failed.id
    assert failed_again.context_id == "ctx-bad"
    assert failed_again.status.state == TaskState.TASK_STATE_FAILED
    assert failed_again.status.message.metadata["praxo.code"] == "MODEL_UNAVAILABLE"
    assert failed_again.status.message.parts[0].text.startswith("MODEL_UNAVAILABLE: ")
