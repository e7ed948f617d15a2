"""An approval answered through the observer names the run it resumed: the interrupted run's
id, even when the observer's run log never saw that run (it was interrupted before the
observer started, or in an earlier process)."""

from __future__ import annotations

import threading
from typing import Any

import httpx
from _helpers import assert_no_new_threads
from _observed import TIMEOUT
from _people import mailer

from praxo_actors.observer import ObserverServer
from praxo_actors.runtime import Runtime
from praxo_actors.testing._eventually import eventually


def test_an_approval_answer_names_the_interrupted_run_the_log_never_saw() -> None:
    before = set(threading.enumerate())
    sent: list[Any] = []
    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    server = None
    try:
        runtime.register_agent("mailer", mailer(sent))
        handle = runtime.session("s", agent="mailer")
        waiting = handle.run("mail").get(timeout=TIMEOUT)
        assert waiting.status == "interrupted"
        server = ObserverServer(runtime, timeout=TIMEOUT)
        with httpx.Client(base_url=server.url, timeout=TIMEOUT) as client:
            page = client.get("/").text
            start = page.index('name="praxo-token" content="') + len('name="praxo-token" content="')
            token = page[start : page.index('"', start)]
            headers = {"origin": server.url.rstrip("/"), "x-praxo-token": token}
            answer = client.post("/api/approvals/s", json={"approved": True}, headers=headers)
            assert answer.status_code == 200, answer.text
            assert answer.json() == {"session_id": "s", "run_id": waiting.run_id, "approved": True}
        eventually(lambda: sent == [{"to": "ada@example.com"}], what="the approved mail sent")
        assert handle.result(waiting.run_id, timeout=TIMEOUT).status == "completed"
    finally:
        runtime.stop()
        if server is not None:
            server.stop()
    assert_no_new_threads(before, TIMEOUT)
