"""The testing helpers drive real agent runs, sync and async, through the documented paths."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest

from praxo_actors import PraxoError
from praxo_actors.agent import Tool, arun_agent, new_agent_options, run_agent
from praxo_actors.models import ModelError, Request, ToolCall, session
from praxo_actors.testing import (
    EchoModel,
    EventRecorder,
    FunctionModel,
    ScriptedModel,
    ScriptExhaustedError,
)

ECHO = Tool(
    "echo",
    "Return the text.",
    {"type": "object", "properties": {"text": {"type": "string"}}},
    lambda args: {"echoed": args["text"]},
)


def test_a_scripted_run_calls_the_tool_and_records_both_requests(
    scripted_model_factory: Callable[..., ScriptedModel], event_recorder: EventRecorder
) -> None:
    """A scripted tool call, then text, completes the run; the second request sees the result."""
    model = scripted_model_factory([ToolCall("echo", {"text": "hi"}, id="c1"), "done"])
    options = new_agent_options(model, tools=[ECHO], sink=event_recorder)
    result = run_agent(options, session("s1"), "please echo")
    assert result.output == "done"
    assert [r.step for r in model.requests] == [1, 2]
    tool_message = model.requests[1].messages[-1]
    assert (tool_message.role, tool_message.tool_call_id) == ("tool", "c1")
    assert json.loads(str(tool_message.content)) == {"echoed": "hi"}
    assert event_recorder.types() == [
        "run.started",
        "model.requested",
        "model.responded",
        "tool.started",
        "tool.completed",
        "model.requested",
        "model.responded",
        "run.completed",
    ]


def test_a_scripted_model_error_fails_the_run_with_its_code(
    scripted_model_factory: Callable[..., ScriptedModel],
) -> None:
    """A scripted ModelError fails the run with the model's own code."""
    model = scripted_model_factory([ModelError("UPSTREAM_DOWN", "503")])
    with pytest.raises(PraxoError) as info:
        run_agent(new_agent_options(model), session("s1"), "hi")
    assert info.value.code == "UPSTREAM_DOWN"


def test_an_exhausted_script_propagates_out_of_the_run(event_recorder: EventRecorder) -> None:
    """Running past the script raises ScriptExhaustedError unchanged, after run.failed."""
    model = ScriptedModel([ToolCall("echo", {"text": "x"})])
    options = new_agent_options(model, tools=[ECHO], sink=event_recorder)
    with pytest.raises(ScriptExhaustedError):
        run_agent(options, session("s1"), "hi")
    failed = event_recorder.wait_for("run.failed", timeout=0)
    assert failed.data["code"] == "AGENT_CALLBACK_EXCEPTION"


def test_acall_drives_an_async_run() -> None:
    """``model.acall`` works as an async model under arun_agent."""
    model = ScriptedModel([ToolCall("echo", {"text": "a"}), "async done"])
    options = new_agent_options(model.acall, tools=[ECHO])
    result = asyncio.run(arun_agent(options, session("s1"), "go"))
    assert (result.output, result.tool_calls, len(model.requests)) == ("async done", 1, 2)


def test_an_async_function_model_runs_under_arun_agent() -> None:
    """A FunctionModel over an ``async def`` answers through ``acall``."""

    async def fn(request: Request) -> str:
        await asyncio.sleep(0)
        return f"saw {len(request.messages)}"

    model = FunctionModel(fn)
    result = asyncio.run(arun_agent(new_agent_options(model.acall), session("s1"), "hi"))
    assert result.output == "saw 1"


def test_a_function_models_garbage_fails_the_run_with_type_error(
    event_recorder: EventRecorder,
) -> None:
    """A function returning neither text nor a reply makes the run raise TypeError."""
    model = FunctionModel(lambda request: 42)
    with pytest.raises(TypeError, match="not a script item: 42"):
        run_agent(new_agent_options(model, sink=event_recorder), session("s1"), "hi")
    assert event_recorder.types()[-1] == "run.failed"


def test_the_echo_model_answers_with_the_input() -> None:
    """EchoModel's answer is the run's input, sync and async."""
    model = EchoModel()
    assert run_agent(new_agent_options(model), session("s1"), "ping").output == "ping"
    result = asyncio.run(arun_agent(new_agent_options(model.acall), session("s2"), "pong"))
    assert result.output == "pong"
