"""The protocol apps, mounted together, are served with ``serve`` and stop on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import openai
from _served import CHILD_TIMEOUT as TIMEOUT
from _served import free_port, wait_until_serving

CHILD = Path(__file__).with_name("_serving_child.py")
ROOT = Path(__file__).parents[2]


def test_both_apps_mounted_together_answer_and_stop_cleanly() -> None:
    """AG-UI under /ag-ui and OpenAI at the root answer on one port; SIGTERM ends it cleanly."""
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
        wait_until_serving(child, url + "/v1/models")
        with openai.OpenAI(base_url=url + "/v1", api_key="x", timeout=TIMEOUT) as client:
            assert [m.id for m in client.models.list()] == ["default"]
            done = client.chat.completions.create(
                model="default", messages=[{"role": "user", "content": "hi"}]
            )
        assert done.choices[0].message.content == "echo: hi"
        body = {
            "threadId": "t",
            "runId": "r",
            "messages": [{"id": "1", "role": "user", "content": "yo"}],
        }
        reply = httpx.post(url + "/ag-ui/", json=body, timeout=TIMEOUT)
        assert reply.status_code == 200 and '"delta":"echo: yo"' in reply.text
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=TIMEOUT)
    assert child.returncode == 0, err
    assert out.decode().strip() == "stopped"
    assert b"Traceback" not in err
