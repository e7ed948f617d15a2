"""``ToolRetry``: a handler tells the model to try again, a bounded number of times per run."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from _helpers import Events, say

from praxo_actors.agent import (
    AgentError,
    ListJournal,
    Tool,
    ToolError,
    ToolRetry,
    arun_agent,
    new_agent_options,
    resume_agent,
    run_agent,
    tool,
)
from praxo_actors.middleware import require_approval
from praxo_actors.models import Request, Response, ToolCall, session


def lookup_tool(calls: list[str]) -> Tool:
    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        calls.append(city)
        if city != "Paris":
            raise ToolRetry(f"no city {city!r}: give its name in English")
        return "found Paris"

    return lookup


def asking(*cities: str) -> Any:
    """A model that calls lookup with each city in turn, then answers."""

    def model(request: Request) -> Response:
        if request.step <= len(cities):
            return say(
                "", ToolCall("lookup", {"city": cities[request.step - 1]}, id=f"c{request.step}")
            )
        return say("done")

    return model


def tool_errors(result: Any) -> list[Any]:
    return [
        json.loads(m.content)["error"]
        for m in result.session.messages
        if m.role == "tool" and m.content.startswith('{"error"')
    ]


def test_tool_retry_is_an_exception_never_a_base_exception() -> None:
    """``ToolRetry`` derives from Exception (a BaseException would stop every actor)."""
    assert issubclass(ToolRetry, Exception)
    assert ToolRetry("again").message == "again"
    with pytest.raises(TypeError):
        ToolRetry(3)  # type: ignore[arg-type]


def test_the_message_goes_back_to_the_model_as_the_call_result() -> None:
    """The retry's message is the call's result, TOOL_RETRY; the model's next call runs."""
    calls: list[str] = []
    options = new_agent_options(asking("Parigi", "Paris"), tools=[lookup_tool(calls)])
    result = run_agent(options, session("s"), "where?")
    assert calls == ["Parigi", "Paris"] and result.output == "done"
    assert tool_errors(result) == [
        {"code": "TOOL_RETRY", "message": "no city 'Parigi': give its name in English"}
    ]
    assert result.tool_calls == 2


def test_a_run_takes_three_retries_by_default_and_fails_on_the_fourth(events: Events) -> None:
    """The fourth retry of a run fails it with AGENT_TOOL_RETRIES after ``run.failed``."""
    calls: list[str] = []
    options = new_agent_options(asking("a", "b", "c", "d"), tools=[lookup_tool(calls)], sink=events)
    with pytest.raises(AgentError) as failed:
        run_agent(options, session("s"), "where?")
    assert failed.value.code == "AGENT_TOOL_RETRIES"
    assert "no city 'd'" in failed.value.message
    assert calls == ["a", "b", "c", "d"]
    assert events[-1].type == "run.failed"
    assert events[-1].data["code"] == "AGENT_TOOL_RETRIES"
    assert events.types().count("tool.completed") == 3


def test_max_tool_retries_sets_the_bound() -> None:
    """``max_tool_retries=0`` fails on the first retry; a higher bound lets more through."""
    options = new_agent_options(asking("a"), tools=[lookup_tool([])], max_tool_retries=0)
    with pytest.raises(AgentError) as failed:
        run_agent(options, session("s"), "x")
    assert failed.value.code == "AGENT_TOOL_RETRIES"
    calls: list[str] = []
    options = new_agent_options(
        asking("a", "b", "c", "d", "e", "Paris"),
        tools=[lookup_tool(calls)],
        max_tool_retries=5,
        max_steps=10,
    )
    assert run_agent(options, session("s"), "x").output == "done"
    assert len(calls) == 6


def test_a_returned_tool_retry_error_counts_the_same() -> None:
    """``ToolError("TOOL_RETRY", ...)`` returned is a retry as much as a raised ToolRetry."""
    options = new_agent_options(
        asking("a", "b"),
        tools=[Tool("lookup", "", {}, lambda args: ToolError("TOOL_RETRY", "again"))],
        max_tool_retries=1,
    )
    with pytest.raises(AgentError) as failed:
        run_agent(options, session("s"), "x")
    assert failed.value.code == "AGENT_TOOL_RETRIES"


def test_retries_are_counted_per_run() -> None:
    """Each run of the same options starts with no retries spent."""
    options = new_agent_options(
        lambda request: asking("a", "Paris")(request),
        tools=[lookup_tool([])],
        max_tool_retries=1,
    )
    first = run_agent(options, session("s"), "x")
    second = run_agent(options, first.session, "y")
    assert first.output == second.output == "done"


def test_other_exceptions_still_propagate_unchanged(events: Events) -> None:
    """A handler's own exception is not a retry: it fails the run and is re-raised as itself."""
    boom = LookupError("down")

    def broken(arguments: dict[str, Any]) -> Any:
        raise boom

    options = new_agent_options(asking("a"), tools=[Tool("lookup", "", {}, broken)], sink=events)
    with pytest.raises(LookupError) as raised:
        run_agent(options, session("s"), "x")
    assert raised.value is boom
    assert events[-1].data["code"] == "AGENT_CALLBACK_EXCEPTION"


def test_a_tool_retry_raised_by_a_model_is_a_callback_exception(events: Events) -> None:
    """Outside a tool handler ToolRetry is an exception like any other."""

    def model(request: Request) -> Response:
        raise ToolRetry("not for models")

    with pytest.raises(ToolRetry):
        run_agent(new_agent_options(model, sink=events), session("s"), "x")
    assert events[-1].data["code"] == "AGENT_CALLBACK_EXCEPTION"


def test_async_handlers_may_raise_tool_retry() -> None:
    """Under arun_agent an async handler's ToolRetry is a retry too."""
    calls: list[str] = []

    async def lookup(arguments: dict[str, Any]) -> str:
        await asyncio.sleep(0)
        calls.append(arguments["city"])
        if arguments["city"] != "Paris":
            raise ToolRetry("try Paris")
        return "found"

    script = asking("Lyon", "Paris")

    async def model(request: Request) -> Response:
        return script(request)

    options = new_agent_options(model, tools=[Tool("lookup", "", {}, lookup)])
    result = asyncio.run(arun_agent(options, session("s"), "x"))
    assert calls == ["Lyon", "Paris"] and result.output == "done"
    assert tool_errors(result) == [{"code": "TOOL_RETRY", "message": "try Paris"}]


def test_retries_spent_before_an_interrupt_still_count_after_resume() -> None:
    """The pending run keeps its retry count: a resumed run cannot take the bound again."""
    calls: list[str] = []
    options = new_agent_options(
        asking("a", "b"),
        tools=[lookup_tool(calls)],
        approval=require_approval(["lookup"]),
        max_tool_retries=1,
    )
    first = run_agent(options, session("s"), "x")
    second = resume_agent(options, first.session, True)  # "a": the one retry allowed
    assert second.status == "interrupted"
    assert second.session.metadata["praxo.pending"]["tool_retries"] == 1
    with pytest.raises(AgentError) as failed:
        resume_agent(options, second.session, True)  # "b": one too many
    assert failed.value.code == "AGENT_TOOL_RETRIES"
    assert "tool_retries" not in first.session.metadata["praxo.pending"]


class PowerCut(BaseException):
    """Stands for the process dying after the retried call."""


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_journaled_run_replays_a_retry_without_calling_the_tool_again(driver: str) -> None:
    """A retry is journaled as the call's result: a resumed run replays it in step."""
    calls: list[str] = []
    cut = [True]
    script = asking("Lyon", "Paris")

    def model(request: Request) -> Response:
        if request.step == 2 and cut[0]:
            cut[0] = False
            raise PowerCut
        return script(request)

    options = new_agent_options(model, tools=[lookup_tool(calls)])
    journal = ListJournal()

    def run() -> Any:
        if driver == "sync":
            return run_agent(options, session("s"), "x", run_id="r1", journal=journal)
        return asyncio.run(arun_agent(options, session("s"), "x", run_id="r1", journal=journal))

    with pytest.raises(PowerCut):
        run()
    result = run()
    assert result.output == "done" and calls == ["Lyon", "Paris"]
    assert tool_errors(result) == [
        {"code": "TOOL_RETRY", "message": "no city 'Lyon': give its name in English"}
    ]
