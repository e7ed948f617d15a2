"""An A2A task acknowledged before the serving process stopped (SIGTERM) or was killed
(SIGKILL) is found by its id after a restart on the same store: its run's outcome, kept by
the runtime, is the task's (completed with its output, or failed with its code); a durable
run in flight at the cut is resumed, its task working, then completed."""

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
from a2a.types import (
    GetTaskRequest,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError

from praxo_actors.testing._eventually import eventually

CHILD = Path(__file__).with_name("_a2a_durable_child.py")
ROOT = Path(__file__).parents[2]


@contextmanager
def child(
    store: Path, settings: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Serve the A2A app over ``store`` in a child process; yield it and its URL; kill it
    after if it still runs."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(settings or {})}
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


async def send_held(url: str) -> Task:
    """Send a message whose run waits for the gate; return its task at once."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        config = ClientConfig(streaming=False, httpx_client=http)
        client = await create_client(url, client_config=config)
        message = new_message([new_text_part("wait")], context_id="ctx-held", role=Role.ROLE_USER)
        request = SendMessageRequest(
            message=message, configuration=SendMessageConfiguration(return_immediately=True)
        )
        [item] = [i async for i in client.send_message(request)]
        return item.task


def test_a_task_in_flight_at_a_kill_is_working_after_the_restart_then_ends(
    tmp_path: Path,
) -> None:
    """A durable run in its model call when the process is killed: after the restart its task
    is found working (the look-up resumes the run), then completed."""
    store, gate = tmp_path / "a2a.sqlite3", tmp_path / "gate"
    settings = {"PRAXO_TEST_GATE": str(gate)}
    with child(store, settings) as (process, url):
        held = asyncio.run(asyncio.wait_for(send_held(url), TIMEOUT))
        process.send_signal(signal.SIGKILL)
        assert process.wait(TIMEOUT) == -signal.SIGKILL
    assert held.status.state in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)

    gate.touch()
    with child(store, settings) as (_, url):
        [first] = asyncio.run(asyncio.wait_for(get_all(url, [held.id]), TIMEOUT))
        assert first.context_id == "ctx-held"
        assert first.status.state in (
            TaskState.TASK_STATE_WORKING,
            TaskState.TASK_STATE_COMPLETED,
        )

        def ended() -> Task | None:
            [task] = asyncio.run(asyncio.wait_for(get_all(url, [held.id]), TIMEOUT))
            return task if task.status.state == TaskState.TASK_STATE_COMPLETED else None

        done = eventually(ended, timeout=TIMEOUT)
    assert output(done) == "echo: wait"
