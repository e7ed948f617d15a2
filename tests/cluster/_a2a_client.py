"""An A2A JSON-RPC client for the cluster's tests: a call, and following a task to its end."""

from __future__ import annotations

from typing import Any

import httpx

TIMEOUT = 120.0  # a busy machine (see test_cluster.py)
HEADERS = {"A2A-Version": "1.0"}


def a2a_rpc(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Call ``method`` and return the whole JSON-RPC answer."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = httpx.post(url + "/", json=body, headers=HEADERS, timeout=TIMEOUT)
    doc: dict[str, Any] = reply.json()
    return doc


def a2a_ended(url: str, task_id: str) -> dict[str, Any]:
    """Follow a task until its run has stopped (or find it stopped); return the task."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
    with httpx.stream("POST", url + "/", json=body, headers=HEADERS, timeout=TIMEOUT) as reply:
        reply.read()  # ends with the task's last state (an error: it had ended already)
    task: dict[str, Any] = a2a_rpc(url, "GetTask", {"id": task_id})["result"]
    return task
