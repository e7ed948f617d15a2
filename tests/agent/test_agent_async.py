"""arun_agent: the same loop under asyncio, with sync and async callbacks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _helpers import say

from praxo_actors.agent import (
    AgentError,
    Tool,
    arun_agent,
    fallback_model,
    new_agent_options,
    run_agent,
)
from praxo_actors.middleware import compaction, structured_output
from praxo_actors.models import (
    Event,
    Message,
    ModelError,
    Request,
    Response,
    Session,
    ToolCall,
    message_assistant,
    session,
)


def test_async_model_and_async_tool() -> None:
    """Async model and tool callbacks are awaited and give the same result as sync ones."""
    replies = [say("", ToolCall("t", {"n": 1})), say("done")]

    async def model(request: Request) -> Response:
        await asyncio.sleep(0)
        return replies[request.step - 1]

    async def handler(arguments: dict[str, Any]) -> Any:
        await asyncio.sleep(0)
        return {"n": arguments["n"] + 1}

    options = new_agent_options(model, tools=[Tool("t", "", {}, handler)])
    result = asyncio.run(arun_agent(options, session("s"), "x", run_id="r"))
    assert result.output == "done"
    assert result.session.messages[2].content == '{"n":2}'

    sync_options = new_agent_options(
        lambda r: replies[r.step - 1], tools=[Tool("t", "", {}, lambda a: {"n": a["n"] + 1})]
    )
    assert asyncio.run(arun_agent(sync_options, session("s"), "x", run_id="r")) == result


def test_sync_callbacks_under_arun_agent(scripted: Any, events: Any) -> None:
    """Plain sync callbacks and a sync sink work under arun_agent."""
    model = scripted(say("", ToolCall("t", {})), say("ok"))
    options = new_agent_options(model, tools=[Tool("t", "", {}, lambda a: 7)], sink=events)
    result = asyncio.run(arun_agent(options, session("s"), "x"))
    assert result.output == "ok" and events.types()[-1] == "run.completed"


def test_async_sink_is_awaited(scripted: Any) -> None:
    """An async sink receives every event under arun_agent."""
    seen: list[str] = []

    async def sink(event: Event) -> None:
        seen.append(event.type)

    options = new_agent_options(scripted(say("ok")), sink=sink)
    asyncio.run(arun_agent(options, session("s"), "x"))
    assert seen == ["run.started", "model.requested", "model.responded", "run.completed"]


def test_async_fallback_children() -> None:
    """Both children of a fallback model may be async under arun_agent."""

    async def primary(request: Request) -> Any:
        return ModelError("DOWN")

    async def backup(request: Request) -> Any:
        return say("from backup")

    options = new_agent_options(fallback_model(primary, backup))
    result = asyncio.run(arun_agent(options, session("s"), "x"))
    assert result.output == "from backup" and result.model_calls == 1


def test_async_repairer_and_summarizer(scripted: Any) -> None:
    """Async repairers and summarisers are awaited."""

    async def repairer(text: str, errors: list[Any]) -> str:
        return '{"name": "Ada"}'

    async def summarizer(messages: list[Message]) -> str:
        return "old stuff"

    options = new_agent_options(
        scripted(say("no json here")),
        structured_output=structured_output({"type": "object", "required": ["name"]}, 1, repairer),
        compaction=compaction(1, keep_last=1, summarizer=summarizer),
    )
    start = Session(id="s", messages=[message_assistant("earlier")])
    result = asyncio.run(arun_agent(options, start, "x"))
    assert result.structured == {"name": "Ada"}
    assert result.session.messages[0].content == "Summary of earlier conversation:\nold stuff"


def test_async_exception_propagates_after_run_failed(events: Any) -> None:
    """An exception from an async model propagates unchanged after run.failed."""
    boom = RuntimeError("async boom")

    async def model(request: Request) -> Response:
        raise boom

    with pytest.raises(RuntimeError) as info:
        asyncio.run(arun_agent(new_agent_options(model, sink=events), session("s"), "x"))
    assert info.value is boom
    assert events[-1].data["code"] == "AGENT_CALLBACK_EXCEPTION"


def test_async_model_error_fails_with_code() -> None:
    """An async model's ModelError fails the run with its code."""

    async def model(request: Request) -> Any:
        return ModelError("QUOTA")

    with pytest.raises(AgentError) as info:
        asyncio.run(arun_agent(new_agent_options(model), session("s"), "x"))
    assert info.value.code == "QUOTA"


def test_runs_interleave_on_one_loop() -> None:
    """Concurrent arun_agent runs interleave while their models wait."""
    started = 0
    all_started = asyncio.Event()

    async def model(request: Request) -> Response:
        nonlocal started
        started += 1
        if started == 3:
            all_started.set()
        await asyncio.wait_for(all_started.wait(), timeout=5)
        return say(request.session_id)

    async def main() -> list[str]:
        options = new_agent_options(model)
        results = await asyncio.gather(
            *(arun_agent(options, session(f"s{i}"), "x") for i in range(3))
        )
        return [r.output for r in results]

    assert asyncio.run(main()) == ["s0", "s1", "s2"]


def test_async_callback_under_run_agent_raises_type_error(events: Any) -> None:
    """An async model used with the sync driver raises TypeError after run.failed."""

    async def model(request: Request) -> Response:
        return say("never")

    with pytest.raises(TypeError, match="arun_agent"):
        run_agent(new_agent_options(model, sink=events), session("s"), "x")
    assert events[-1].data["code"] == "AGENT_CALLBACK_EXCEPTION"
