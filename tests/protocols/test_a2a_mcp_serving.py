"""The A2A app and the MCP server, mounted together, are served with ``serve`` and stop on
SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from _served import CHILD_TIMEOUT as TIMEOUT
from _served import free_port, wait_until_serving
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_message, new_text_part
from a2a.types import Role, SendMessageRequest, TaskState
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

CHILD = Path(__file__).with_name("_a2a_mcp_child.py")
ROOT = Path(__file__).parents[2]


async def talk(url: str) -> tuple[str, str]:
    """Ask over A2A and over MCP; return both answers."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        config = ClientConfig(streaming=False, httpx_client=http)
        a2a = await create_client(url, client_config=config)
        message = new_message([new_text_part("hi")], context_id="c", role=Role.ROLE_USER)
        [item] = [i async for i in a2a.send_message(SendMessageRequest(message=message))]
        assert item.task.status.state == TaskState.TASK_STATE_COMPLETED
        over_a2a = item.task.artifacts[0].parts[0].text
        async with Client(streamable_http_client(url + "/tools/mcp", http_client=http)) as mcp:
            called = await mcp.call_tool("default", {"input": "yo"})
            assert called.structured_content is not None
            over_mcp = called.structured_content["output"]
    return over_a2a, over_mcp


def test_both_served_together_answer_and_stop_cleanly() -> None:
    """A2A at the root and MCP under /tools answer on one port; SIGTERM ends it cleanly."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        wait_until_serving(child, url + "/.well-known/agent-card.json")
        answers = asyncio.run(asyncio.wait_for(talk(url), TIMEOUT))
        assert answers == ("echo: hi", "echo: yo")
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=TIMEOUT)
    assert child.returncode == 0, err
    assert out.decode().strip() == "stopped"
    assert b"Traceback" not in err
