"""Interrupts and approvals in direct runs: run_agent stops, resume_agent goes on."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _helpers import Events

from praxo_actors import AgentError
from praxo_actors.agent import (
    Interrupt,
    Tool,
    aresume_agent,
    arun_agent,
    new_agent_options,
    resume_agent,
    run_agent,
)
from praxo_actors.core import dump_checkpoint, load_checkpoint
from praxo_actors.middleware import call_limit, require_approval
from praxo_actors.models import Request, Response, ToolCall, message_assistant, session


def _model(calls: list[ToolCall]) -> Any:
    def model(request: Request) -> Response:
        if request.step == 1:
            return Response(message_assistant("", calls), usage={"input_tokens": 1})
        results = [m.content for m in request.messages if m.role == "tool"]
        return Response(message_assistant(" | ".join(map(str, results))), usage={"input_tokens": 1})

    return model


def ask(args: dict[str, Any]) -> Any:
    return Interrupt({"question": args["q"]})


def test_a_tool_interrupt_stops_the_run_and_resume_goes_on() -> None:
    events = Events()
    calls = [ToolCall("ask", {"q": "which city?"}, id="a"), ToolCall("echo", {"x": 1}, id="b")]
    tools = [Tool("ask", "", {}, ask), Tool("echo", "", {}, lambda a: a["x"])]
    options = new_agent_options(_model(calls), tools=tools, sink=events)
    stopped = run_agent(options, session("s"), "plan a trip", run_id="r1")
    assert stopped.status == "interrupted"
    assert stopped.interrupt == {"question": "which city?"}
    assert stopped.output == "" and stopped.run_id == "r1"
    assert events.types()[-1] == "run.interrupted"
    # The session holds the run so far and survives a checkpoint round trip.
    kept = load_checkpoint(dump_checkpoint(stopped.session))
    with pytest.raises(AgentError) as busy:
        run_agent(options, kept, "something else")
    assert busy.value.code == "SESSION_INTERRUPTED"
    done = resume_agent(options, kept, "Lisbon")
    assert done.status == "completed" and done.run_id == "r1"
    assert done.output == '"Lisbon" | 1'
    assert done.model_calls == 2 and done.tool_calls == 2 and done.usage == {"input_tokens": 2}
    assert "praxo.pending" not in done.session.metadata
    roles = [m.role for m in done.session.messages]
    assert roles == ["user", "assistant", "tool", "tool", "assistant"]
    assert "run.resumed" in events.types()
    with pytest.raises(AgentError) as none:
        resume_agent(options, done.session, "again")
    assert none.value.code == "SESSION_NOT_INTERRUPTED"


def test_approvals_approve_deny_and_edit() -> None:
    sent: list[dict[str, Any]] = []

    def send(args: dict[str, Any]) -> str:
        sent.append(args)
        return "sent"

    def options() -> Any:
        calls = [ToolCall("send", {"to": "ada"}, id="c1")]
        return new_agent_options(
            _model(calls),
            tools=[Tool("send", "", {}, send)],
            approval=require_approval(["send"]),
            call_limit=call_limit(0, 1),
        )

    stopped = run_agent(options(), session("s"), "mail ada")
    assert stopped.interrupt == {
        "approval": {"tool": "send", "arguments": {"to": "ada"}, "call_id": "c1"}
    }
    assert sent == []
    assert resume_agent(options(), stopped.session, True).output == '"sent"'
    assert sent == [{"to": "ada"}]
    denied = resume_agent(options(), stopped.session, False)
    assert "APPROVAL_DENIED" in denied.output and denied.tool_calls == 0
    edited = resume_agent(options(), stopped.session, {"approved": True, "arguments": {"to": "bo"}})
    assert edited.output == '"sent"' and sent[-1] == {"to": "bo"}
    for bad in ("yes", {"approved": "yes"}, {"approved": True, "arguments": [1]}):
        with pytest.raises(AgentError) as info:
            resume_agent(options(), stopped.session, bad)
        assert info.value.code == "AGENT_INVALID_RESUME"


def test_async_resume_and_an_interrupt_payload_must_be_json() -> None:
    calls = [ToolCall("ask", {"q": "?"}, id="a")]

    async def aask(args: dict[str, Any]) -> Any:
        return Interrupt(args)

    options = new_agent_options(_model(calls), tools=[Tool("ask", "", {}, aask)])

    async def main() -> str:
        stopped = await arun_agent(options, session("s"), "go")
        return (await aresume_agent(options, stopped.session, {"answer": 42})).output

    assert asyncio.run(main()) == '{"answer":42}'
    with pytest.raises(TypeError, match="JSON"):
        Interrupt({1, 2})
