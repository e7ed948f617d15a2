"""The AG-UI app's ASGI messages: the body ends with the chunk that ends the run."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.protocols import ag_ui_app
from praxo_actors.runtime import Runtime

TIMEOUT = 10.0


def chat(request: Request) -> Response:
    return Response(message_assistant(f"You said: {request.messages[-1].content}"))


async def _messages(app: Any, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """POST ``doc`` to ``app`` as an ASGI call; return every message the app sent."""
    body = json.dumps(doc).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    sent: list[dict[str, Any]] = []
    done = asyncio.Event()
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            done.set()

    await asyncio.wait_for(app(scope, receive, send), TIMEOUT)
    return sent


def test_the_last_body_message_carries_the_runs_last_event() -> None:
    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    try:
        runtime.register_agent("default", lambda: new_agent_options(chat))
        doc = {
            "threadId": "t1",
            "runId": "r1",
            "messages": [{"id": "m", "role": "user", "content": "hi"}],
        }
        sent = asyncio.run(_messages(ag_ui_app(runtime), doc))
    finally:
        runtime.stop()
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    bodies = sent[1:]
    assert all(m["type"] == "http.response.body" for m in bodies)
    assert [m.get("more_body", False) for m in bodies] == [True] * (len(bodies) - 1) + [False]
    assert b'"type":"RUN_FINISHED"' in bodies[-1]["body"]
    whole = b"".join(m["body"] for m in bodies)
    assert whole.count(b"data: ") == whole.count(b"\n\n") and whole.endswith(b"}\n\n")
    assert b"You said: hi" in whole
