"""A durable, approval-gated run cut off anywhere waits for its approval after a restart, is
resumed under its own run id, completes, and leaves its session serving."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, error_code

from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.middleware import require_approval
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime

Start = Callable[..., Runtime]


class Mailer:
    """An approval-gated agent whose first model call can be held (to cut the run there)."""

    def __init__(self, hold: bool = False) -> None:
        self.hold = hold
        self.entered = threading.Event()
        self.sent: list[dict[str, Any]] = []

    async def model(self, request: Request) -> Response:
        if request.step == 1:
            if self.hold:
                self.entered.set()
                await asyncio.sleep(TIMEOUT * 3)  # cut off here by the stop
            if request.messages[-1].content == "first":  # a run with nothing to approve
                return Response(message_assistant("first done"))
            return Response(message_assistant("", [ToolCall("send", {"to": "ada"}, id="c1")]))
        return Response(message_assistant(f"result: {request.messages[-1].content}"))

    def send(self, args: dict[str, Any]) -> str:
        self.sent.append(args)
        return f"sent to {args['to']}"

    def agent(self) -> AgentOptions:
        tools = [Tool("send", "", {}, self.send)]
        return new_agent_options(self.model, tools=tools, approval=require_approval(["send"]))


ASKED = {"approval": {"tool": "send", "arguments": {"to": "ada"}, "call_id": "c1"}}


def _cut(path: Path, where: str) -> str:
    """Submit a durable approval-gated run, stop the runtime at ``where``; return its id."""
    mailer = Mailer(hold=where == "model")
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        rt.register_agent("default", mailer.agent, durable=True)
        handle = rt.session("s")
        if where == "queued":  # before its first model call: queued behind another run
            mailer.hold = True
            first = handle.submit("first")
            assert mailer.entered.wait(TIMEOUT)
            mailer.hold = False
            run_id = handle.submit("mail ada")
            assert first != run_id
            return run_id
        run_id = handle.submit("mail ada")
        if where == "model":
            assert mailer.entered.wait(TIMEOUT)
        elif where == "approval":
            assert handle.result(run_id, timeout=TIMEOUT).status == "interrupted"
        return run_id
    finally:
        rt.stop()


@pytest.mark.parametrize("where", ["model", "queued", "approval"])
def test_an_approval_cut_off_by_a_stop_resumes_under_its_own_id(
    runtime: Start, tmp_path: Path, where: str
) -> None:
    """Stopped before or in its first model call, or while it waits: after a restart the run
    waits for its approval, resume(True) completes it under its id, the session serves on."""
    path = tmp_path / "s.sqlite3"
    run_id = _cut(path, where)
    mailer = Mailer()
    rt = runtime(store=path, resume=True)
    rt.register_agent("default", mailer.agent, durable=True)
    handle = rt.session("s")
    waiting = handle.result(run_id, timeout=TIMEOUT)
    assert waiting.status == "interrupted" and waiting.interrupt == ASKED
    assert waiting.run_id == run_id
    assert rt.inspect("s").agent == "default"
    resumed = handle.resume(True)
    assert resumed.run_id == run_id  # at once: what a caller answers with is the run's id
    done = resumed.get(timeout=TIMEOUT)
    assert done.status == "completed" and done.output == 'result: "sent to ada"'
    assert done.run_id == run_id and resumed.run_id == run_id
    assert mailer.sent == [{"to": "ada"}]
    assert handle.result(run_id, timeout=TIMEOUT).output == done.output
    # Serving: a next run goes (and waits for its own approval), the session passivates.
    assert handle.run("again").get(timeout=TIMEOUT).status == "interrupted"
    assert handle.resume(False).get(timeout=TIMEOUT).status == "completed"
    assert handle.passivate(timeout=TIMEOUT)


def test_a_restored_session_knows_its_agent(runtime: Start, tmp_path: Path) -> None:
    """inspect().agent names the agent of a restored session's last run before it runs again."""
    path = tmp_path / "s.sqlite3"
    with Runtime.start(path, idle_timeout=None, timeout=TIMEOUT) as rt:
        rt.register_agent("mailer", Mailer().agent, durable=True)
        done = rt.session("s", agent="mailer").run("mail ada").get(timeout=TIMEOUT)
        assert done.status == "interrupted"
    again = runtime(store=path)
    again.register_agent("mailer", Mailer().agent, durable=True)
    assert again.inspect("s").state == "passivated"
    assert again.inspect("s").agent == "mailer"
    # Restored by a run it refuses (its last run waits for approval): live, its agent known.
    refused = again.session("s", agent="mailer").run("something else")
    assert error_code(refused) == "SESSION_INTERRUPTED"
    info = again.inspect("s")
    assert info.state == "live" and info.agent == "mailer"
