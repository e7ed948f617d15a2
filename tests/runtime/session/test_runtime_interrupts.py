"""People in the loop under the runtime: interrupts, approvals, resume across restarts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, error_code

from praxo_actors.agent import AgentOptions, Interrupt, Tool, new_agent_options
from praxo_actors.middleware import require_approval
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.testing import EventRecorder

Start = Callable[..., Runtime]
sent: list[dict[str, Any]] = []


def _model(request: Request) -> Response:
    if request.step == 1:
        calls = [ToolCall("send", {"to": "ada"}, id="c1")]
        return Response(message_assistant("", calls))
    return Response(message_assistant(f"result: {request.messages[-1].content}"))


def _send(args: dict[str, Any]) -> str:
    sent.append(args)
    return f"sent to {args['to']}"


def approving() -> AgentOptions:
    return new_agent_options(
        _model, tools=[Tool("send", "", {}, _send)], approval=require_approval(["send"])
    )


def asking() -> AgentOptions:
    tool = Tool("send", "", {}, lambda args: Interrupt({"confirm": args["to"]}))
    return new_agent_options(_model, tools=[tool])


@pytest.fixture(autouse=True)
def _clear() -> None:
    sent.clear()


def test_an_approval_waits_for_a_person(runtime: Start) -> None:
    rt = runtime(agents={"default": approving})
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="run.*")
    handle = rt.session("s")
    first = handle.run("mail ada")
    stopped = first.get(timeout=TIMEOUT)
    assert stopped.status == "interrupted" and sent == []
    asked = {"approval": {"tool": "send", "arguments": {"to": "ada"}, "call_id": "c1"}}
    assert stopped.interrupt == asked
    info = rt.inspect("s")
    assert info.pending_interrupt == asked and info.running_run_id is None
    assert error_code(handle.run("something else")) == "SESSION_INTERRUPTED"
    done = handle.resume(True).get(timeout=TIMEOUT)
    assert done.status == "completed" and done.run_id == first.run_id
    assert done.output == 'result: "sent to ada"' and sent == [{"to": "ada"}]
    assert rt.inspect("s").pending_interrupt is None
    assert error_code(handle.resume(True)) == "SESSION_NOT_INTERRUPTED"
    recorder.wait_for("run.completed", TIMEOUT)
    assert [t for t in recorder.types() if t != "run.failed"] == [
        "run.started",
        "run.interrupted",
        "run.resumed",
        "run.completed",
    ]


def test_a_pending_approval_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with Runtime.start(path, idle_timeout=None, timeout=TIMEOUT) as rt:
        rt.register_agent("default", approving)
        stopped = rt.session("s").run("mail ada").get(timeout=TIMEOUT)
        assert stopped.status == "interrupted"
        assert rt.session("s").passivate()
        assert rt.inspect("s").state == "passivated"
        assert rt.inspect("s").pending_interrupt == stopped.interrupt
    with Runtime.start(path, idle_timeout=None, timeout=TIMEOUT) as rt:
        rt.register_agent("default", approving)
        edited = {"approved": True, "arguments": {"to": "bo"}}
        done = rt.session("s").resume(edited).get(timeout=TIMEOUT)
        assert done.output == 'result: "sent to bo"' and done.run_id == stopped.run_id
        roles = [m.role for m in rt.session("s").history()]
        assert roles == ["user", "assistant", "tool", "assistant"]


def test_a_denied_call_and_a_tool_interrupt(runtime: Start) -> None:
    rt = runtime(agents={"default": approving, "asking": asking})
    handle = rt.session("s")
    handle.run("mail ada").get(timeout=TIMEOUT)
    denied = handle.resume(False).get(timeout=TIMEOUT)
    assert "APPROVAL_DENIED" in denied.output and sent == []
    other = rt.session("t", agent="asking")
    stopped = other.run("mail ada").get(timeout=TIMEOUT)
    assert stopped.interrupt == {"confirm": "ada"}
    assert other.resume("yes, go").get(timeout=TIMEOUT).output == 'result: "yes, go"'
    assert error_code(other.resume("x")) == "SESSION_NOT_INTERRUPTED"
    from praxo_actors import PraxoError

    with pytest.raises(PraxoError) as bad:
        other.resume({1, 2})
    assert bad.value.code == "RUNTIME_INVALID_INPUT"


def test_resume_is_awaitable_on_the_runtimes_loop() -> None:
    async def main() -> str:
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", approving)
            handle = rt.session("s")
            stopped = await handle.arun("mail ada")
            assert stopped.status == "interrupted"
            return (await handle.aresume(True)).output

    assert asyncio.run(main()) == 'result: "sent to ada"'
