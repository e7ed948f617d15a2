"""Tools as users write them, under the runtime: @tool, checked arguments, ToolRetry, typed
output and instructions, for runs hosted by session actors."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from _helpers import Scripted, say
from _runtime_helpers import TIMEOUT

from praxo_actors.agent import (
    AgentError,
    AgentOptions,
    ToolContext,
    ToolRetry,
    new_agent_options,
    tool,
)
from praxo_actors.middleware import structured_output
from praxo_actors.models import Request, ToolCall, message_system
from praxo_actors.runtime import Runtime

Start = Callable[..., Runtime]


class City(msgspec.Struct):
    name: str
    population: int


@dataclasses.dataclass
class Point:
    x: float
    y: float


def tool_contents(result: Any) -> list[str]:
    return [m.content for m in result.session.messages if m.role == "tool"]


def test_function_tools_run_on_the_pool_and_the_loop_with_their_context(runtime: Start) -> None:
    """A sync @tool runs on the pool, an async one on the loop; both get their context."""
    seen: list[tuple[str, ToolContext | None]] = []

    @tool
    def find(city: str, context: ToolContext) -> str:
        seen.append((city, context))
        return f"found {city}"

    @tool
    async def count(city: str, context: ToolContext | None = None) -> dict[str, int]:
        await asyncio.sleep(0)
        seen.append((city, context))
        return {"people": 3}

    def agent() -> AgentOptions:
        calls = (
            ToolCall("find", {"city": "Oslo"}, id="a"),
            ToolCall("count", {"city": "Rome"}, id="b"),
        )
        return new_agent_options(Scripted((say("", *calls), say("ok"))), tools=[find, count])

    rt = runtime(agents={"default": agent})
    future = rt.session("s1").run("go")
    result = future.get(timeout=TIMEOUT)
    rid = future.run_id
    assert tool_contents(result) == ["found Oslo", '{"people":3}']
    assert seen == [
        ("Oslo", ToolContext(rid, "s1", "a", f"{rid}:1:0", 1)),
        ("Rome", ToolContext(rid, "s1", "b", f"{rid}:1:1", 1)),
    ]


def test_refused_arguments_and_retries_go_back_to_the_model(runtime: Start) -> None:
    """Under the runtime too, bad arguments never reach the function and retries are bounded."""
    calls: list[str] = []

    @tool
    def lookup(city: str) -> str:
        calls.append(city)
        if city != "Paris":
            raise ToolRetry("give the English name")
        return "found"

    def agent() -> AgentOptions:
        model = Scripted(
            (
                say("", ToolCall("lookup", {"city": 7})),
                say("", ToolCall("lookup", {"city": "Parigi"})),
                say("", ToolCall("lookup", {"city": "Paris"})),
                say("done"),
            )
        )
        return new_agent_options(model, tools=[lookup], max_tool_retries=1)

    rt = runtime(agents={"default": agent})
    result = rt.session("s1").run("go").get(timeout=TIMEOUT)
    assert calls == ["Parigi", "Paris"] and result.output == "done"
    codes = [json.loads(text)["error"]["code"] for text in tool_contents(result)[:2]]
    assert codes == ["TOOL_CALL_INVALID_ARGUMENTS", "TOOL_RETRY"]


def test_too_many_retries_fail_the_hosted_run(runtime: Start) -> None:
    """One retry beyond ``max_tool_retries`` fails the run's future with AGENT_TOOL_RETRIES."""

    @tool
    def lookup(city: str) -> str:
        raise ToolRetry("no")

    def agent() -> AgentOptions:
        model = Scripted(tuple(say("", ToolCall("lookup", {"city": c})) for c in "ab"))
        return new_agent_options(model, tools=[lookup], max_tool_retries=1)

    rt = runtime(agents={"default": agent})
    with pytest.raises(AgentError) as failed:
        rt.session("s1").run("go").get(timeout=TIMEOUT)
    assert failed.value.code == "AGENT_TOOL_RETRIES"


def test_instructions_lead_every_request_and_stay_out_of_the_history(runtime: Start) -> None:
    """The session actor's runs send the instructions; the committed history never holds them."""
    requests: list[Request] = []

    def model(request: Request) -> Any:
        requests.append(request)
        return say("ok")

    def agent() -> AgentOptions:
        return new_agent_options(model, instructions=lambda current: f"You serve {current.id}.")

    rt = runtime(agents={"default": agent})
    handle = rt.session("s1")
    handle.run("one").get(timeout=TIMEOUT)
    handle.run("two").get(timeout=TIMEOUT)
    assert [r.messages[0] for r in requests] == [message_system("You serve s1.")] * 2
    assert [m.role for m in requests[1].messages] == ["system", "user", "assistant", "user"]
    assert all(m.role != "system" for m in handle.history(timeout=TIMEOUT))


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        (City, '{"name": "Oslo", "population": 7}', City("Oslo", 7)),
        (Point, '{"x": 1, "y": 2}', Point(1.0, 2.0)),
    ],
)
def test_a_hosted_run_returns_an_instance_of_the_output_type(
    runtime: Start, kind: Any, text: str, expected: Any
) -> None:
    """The future's result holds the instance; so does the result read back from the store."""

    def agent() -> AgentOptions:
        return new_agent_options(
            lambda request: say(text), structured_output=structured_output(kind)
        )

    rt = runtime(agents={"default": agent})
    handle = rt.session("s1")
    future = handle.run("go")
    assert future.get(timeout=TIMEOUT).structured == expected
    kept = handle.result(future.run_id, timeout=TIMEOUT)
    assert type(kept.structured) is kind and kept.structured == expected


def test_a_hosted_run_returns_a_pydantic_instance(runtime: Start) -> None:
    """A pydantic output type gives its instance through the runtime's future."""
    pydantic = pytest.importorskip("pydantic", reason="pydantic is not installed")

    class Person(pydantic.BaseModel):
        name: str

    def agent() -> AgentOptions:
        reply = say('{"name": "Ada"}')
        return new_agent_options(lambda request: reply, structured_output=structured_output(Person))

    rt = runtime(agents={"default": agent})
    assert rt.session("s1").run("go").get(timeout=TIMEOUT).structured == Person(name="Ada")
