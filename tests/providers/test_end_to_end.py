"""Runs end to end: arun_agent and the runtime, on real SDKs against loopback servers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from _helpers import Events, assert_no_new_threads
from _model_servers import TIMEOUT, Reply, Server, Stream
from _payloads import LOOK, VirtualClock, chunk, function_call, message, stream_of, text_block

from praxo_actors import AgentError
from praxo_actors.agent import Tool, arun_agent, new_agent_options
from praxo_actors.models import session
from praxo_actors.providers import anthropic_model, openai_model, rate_limited, retrying
from praxo_actors.runtime import Runtime
from praxo_actors.testing import EventRecorder


def look_tool(seen: list[dict[str, Any]]) -> Tool:
    """Return the ``look`` tool, recording the arguments it is called with."""

    def look(arguments: dict[str, Any]) -> dict[str, Any]:
        seen.append(arguments)
        return {"found": arguments["q"].upper()}

    return Tool(LOOK.name, LOOK.description, LOOK.parameters, look)


def openai_tool_then_answer() -> list[Stream]:
    """Return two streamed completions: a call of ``look``, then a final answer."""
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "look"}}
    usage = {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}
    return [
        Stream(
            [
                chunk({"role": "assistant", "tool_calls": [call]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": "x"}'}}]}),
                chunk({}, "tool_calls"),
                chunk(None, usage=usage),
                (None, "[DONE]"),
            ]
        ),
        Stream(
            [
                chunk({"content": "It is "}),
                chunk({"content": "X."}, "stop"),
                chunk(None, usage={**usage, "prompt_tokens": 20}),
                (None, "[DONE]"),
            ]
        ),
    ]


def test_arun_agent_streams_and_calls_tools_through_openai(server: Server) -> None:
    """A streamed tool call runs the tool; its result goes back by id; usage is summed."""
    server.script(*openai_tool_then_answer())
    seen: list[dict[str, Any]] = []
    model = openai_model("m", base_url=f"{server.url}/v1", api_key="k", stream=True)
    events = Events()
    options = new_agent_options(model, tools=[look_tool(seen)], sink=events)

    async def go() -> Any:
        async with model:
            return await arun_agent(options, session("s1"), "what is x?")

    result = asyncio.run(go())
    assert result.output == "It is X."
    assert seen == [{"q": "x"}]
    assert (result.steps, result.model_calls, result.tool_calls) == (2, 2, 1)
    assert result.usage == {"input_tokens": 30, "output_tokens": 8}
    deltas = [e.data for e in events if e.type == "model.delta"]
    assert deltas == [{"step": 2, "text": "It is "}, {"step": 2, "text": "X."}]
    assert events.types().index("model.delta") > events.types().index("model.requested")
    second = server.bodies()[1]["messages"]
    assert second[-2]["tool_calls"] == [function_call("c1", "look", '{"q":"x"}')]
    assert second[-1] == {"role": "tool", "tool_call_id": "c1", "content": '{"found":"X"}'}


def test_arun_agent_calls_tools_through_anthropic(server: Server) -> None:
    """A tool_use reply runs the tool; its tool_result goes back in the next user turn."""
    use = {"type": "tool_use", "id": "tu1", "name": "look", "input": {"q": "y"}}
    server.script(
        Reply(message([use], "tool_use", input_tokens=8, output_tokens=3)),
        Stream(stream_of(text_block(0, "It is ", "Y."))),
    )
    seen: list[dict[str, Any]] = []
    model = anthropic_model("claude-test", base_url=server.url, api_key="k")
    streaming = anthropic_model("claude-test", base_url=server.url, api_key="k", stream=True)
    replies = iter([model, streaming])  # the second step streams

    async def either(request: Any) -> Any:
        return await next(replies)(request)

    events = Events()
    options = new_agent_options(either, tools=[look_tool(seen)], sink=events)

    async def go() -> Any:
        async with model, streaming:
            return await arun_agent(options, session("s1"), "what is y?")

    result = asyncio.run(go())
    assert (result.output, seen) == ("It is Y.", [{"q": "y"}])
    assert result.usage == {"input_tokens": 29, "output_tokens": 12}
    assert [e.data["text"] for e in events if e.type == "model.delta"] == ["It is ", "Y."]
    turns = server.bodies()[1]["messages"]
    assert turns[-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": '{"found":"Y"}'}],
    }


def test_a_provider_error_fails_the_run_with_its_code(server: Server) -> None:
    """A 401 fails the run with AgentError MODEL_AUTH and the server's message."""
    server.script(Reply({"error": {"message": "bad key"}}, status=401))
    model = openai_model("m", base_url=f"{server.url}/v1", api_key="k")

    async def go() -> Any:
        async with model:
            return await arun_agent(new_agent_options(model), session("s1"), "hi")

    with pytest.raises(AgentError) as info:
        asyncio.run(go())
    assert info.value.code == "MODEL_AUTH"
    assert "bad key" in info.value.message


@pytest.fixture
def runtime() -> Iterator[list[Runtime]]:
    """Collect the runtimes a test starts; stop them after it and check no thread is left."""
    before = set(threading.enumerate())
    started: list[Runtime] = []
    yield started
    for rt in started:
        rt.stop()
    assert_no_new_threads(before, TIMEOUT)


def test_the_runtime_runs_a_streaming_limited_retried_openai_model(
    server: Server, runtime: list[Runtime], clock: VirtualClock
) -> None:
    """Under the runtime: a 429 is retried, deltas reach subscribers, the tool runs."""
    limited = Reply({"error": {"message": "slow"}}, status=429, headers={"retry-after": "1"})
    server.script(limited, *openai_tool_then_answer())
    seen: list[dict[str, Any]] = []
    base = openai_model("m", base_url=f"{server.url}/v1", api_key="k", stream=True)
    model = rate_limited(retrying(base, 3, clock=clock, random=lambda: 0.0), 100, 4)
    rt = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    runtime.append(rt)
    rt.register_agent("default", lambda: new_agent_options(model, tools=[look_tool(seen)]))
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="*")
    try:
        result = rt.session("s1").run("what is x?").get(timeout=TIMEOUT)
        recorder.wait_for("run.completed", TIMEOUT)
    finally:
        base.close()  # from this thread, on the runtime's loop, while it still runs
    assert result.output == "It is X."
    assert seen == [{"q": "x"}]
    assert clock.sleeps == [1.0]  # the server's retry-after, over the 0.25 s backoff
    assert len(server.requests) == 3
    assert result.usage == {"input_tokens": 30, "output_tokens": 8}
    deltas = [e.data["text"] for e in recorder.events if e.type == "model.delta"]
    assert "".join(deltas) == "It is X."
    assert model.limit.statistics().started == 2


def test_the_runtime_fails_a_run_with_the_providers_code(
    server: Server, runtime: list[Runtime]
) -> None:
    """Under the runtime a 529 fails the run with MODEL_UNAVAILABLE and a run.failed event."""
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    server.script(Reply(overloaded, status=529))
    model = anthropic_model("claude-test", base_url=server.url, api_key="k", stream=True)
    rt = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    runtime.append(rt)
    rt.register_agent("default", lambda: new_agent_options(model))
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="run.*")
    try:
        with pytest.raises(AgentError) as info:
            rt.session("s1").run("hi").get(timeout=TIMEOUT)
        failed = recorder.wait_for("run.failed", TIMEOUT)
    finally:
        model.close()
    assert info.value.code == "MODEL_UNAVAILABLE"
    assert failed.data["code"] == "MODEL_UNAVAILABLE"
