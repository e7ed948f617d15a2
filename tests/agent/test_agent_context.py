"""What a callback knows of its run: tool_context(), model_context() deltas, and usage totals."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _helpers import Events, Scripted, say

from praxo_actors.agent import (
    ModelContext,
    Tool,
    ToolContext,
    arun_agent,
    model_context,
    new_agent_options,
    run_agent,
    start_run,
    tool_context,
)
from praxo_actors.agent._effects import CallModel, CallTool
from praxo_actors.models import Request, Response, ToolCall, message_assistant, session


def _two_calls() -> Scripted:
    return Scripted(
        (
            say("", ToolCall("look", {"q": 1}, id="c1"), ToolCall("look", {"q": 2})),
            say("done"),
        )
    )


def test_tool_context_names_the_call_and_a_stable_key() -> None:
    seen: list[ToolContext | None] = []

    def look(_args: dict[str, Any]) -> int:
        seen.append(tool_context())
        return 1

    options = new_agent_options(_two_calls(), tools=[Tool("look", "", {}, look)])
    result = run_agent(options, session("s"), "go", run_id="r1")
    assert seen == [
        ToolContext("r1", "s", "c1", "r1:1:0", 1),
        ToolContext("r1", "s", None, "r1:1:1", 1),
    ]
    assert result.output == "done"
    assert tool_context() is None  # reset once the handler returned


def test_async_tool_keeps_its_context_across_awaits() -> None:
    seen: list[ToolContext | None] = []

    async def look(_args: dict[str, Any]) -> int:
        await asyncio.sleep(0)
        seen.append(tool_context())
        return 1

    options = new_agent_options(_two_calls(), tools=[Tool("look", "", {}, look)])
    asyncio.run(arun_agent(options, session("s"), "go", run_id="r2"))
    assert [c.idempotency_key for c in seen if c is not None] == ["r2:1:0", "r2:1:1"]


def _streaming(chunks: list[str]) -> Any:
    async def model(request: Request) -> Response:
        context = model_context()
        assert context is not None and context.step == request.step
        for chunk in chunks:
            await asyncio.sleep(0)
            context.delta(chunk)
        return Response(message_assistant("".join(chunks)), usage={"input_tokens": 2})

    return model


def test_deltas_arrive_between_requested_and_responded() -> None:
    events = Events()
    options = new_agent_options(_streaming(["he", "llo"]), sink=events)
    result = asyncio.run(arun_agent(options, session("s"), "hi"))
    assert result.output == "hello"
    assert events.types() == [
        "run.started",
        "model.requested",
        "model.delta",
        "model.delta",
        "model.responded",
        "run.completed",
    ]
    assert [e.data for e in events if e.type == "model.delta"] == [
        {"step": 1, "text": "he"},
        {"step": 1, "text": "llo"},
    ]
    assert [e.seq for e in events] == list(range(6))


def test_deltas_reach_an_async_sink_before_the_response() -> None:
    seen: list[str] = []

    async def sink(event: Any) -> None:
        await asyncio.sleep(0)
        seen.append(event.type)

    options = new_agent_options(_streaming(["a", "b"]), sink=sink)
    asyncio.run(arun_agent(options, session("s"), "hi"))
    assert seen.index("model.responded") > max(i for i, t in enumerate(seen) if t == "model.delta")
    assert seen.count("model.delta") == 2


def test_delta_without_a_sink_does_nothing_and_checks_its_type() -> None:
    def model(_request: Request) -> Response:
        context = model_context()
        assert isinstance(context, ModelContext)
        context.delta("ignored")
        with pytest.raises(TypeError, match="must be str"):
            context.delta(3)  # type: ignore[arg-type]
        return say("ok")

    assert run_agent(new_agent_options(model), session("s"), "hi").output == "ok"


def test_usage_sums_integer_counters_over_model_calls() -> None:
    replies = (
        Response(
            message_assistant("", [ToolCall("look", {})]),
            usage={"input_tokens": 3, "output_tokens": 1, "model": "m"},
        ),
        Response(message_assistant("done"), usage={"input_tokens": 5, "cached": True}),
    )
    options = new_agent_options(Scripted(replies), tools=[Tool("look", "", {}, lambda _a: 1)])
    result = run_agent(options, session("s"), "go")
    assert result.usage == {"input_tokens": 8, "output_tokens": 1}
    assert run_agent(new_agent_options(Scripted((say("x"),))), session("s"), "go").usage == {}


def test_effects_carry_their_contexts_for_other_drivers() -> None:
    options = new_agent_options(_two_calls(), tools=[Tool("look", "", {}, lambda _a: 1)])
    run = start_run(options, session("s"), "go", run_id="r3")
    effect = run.effect
    kinds = []
    while effect is not None:
        if isinstance(effect, CallModel):
            assert effect.context is not None and effect.context.run_id == "r3"
            kinds.append("model")
            effect = run.send(effect.model(effect.request))
        elif isinstance(effect, CallTool):
            assert effect.context is not None
            kinds.append(effect.context.idempotency_key)
            effect = run.send(1)
        else:
            effect = run.send(None)
    assert kinds == ["model", "r3:1:0", "r3:1:1", "model"]
