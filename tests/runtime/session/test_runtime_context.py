"""Tool and model contexts under the runtime: sync tools on the pool, async ones on the loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from _helpers import Scripted, say
from _runtime_helpers import TIMEOUT

from praxo_actors.agent import (
    AgentOptions,
    Tool,
    ToolContext,
    model_context,
    new_agent_options,
    tool_context,
)
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.testing import EventRecorder

Start = Callable[..., Runtime]


def test_tools_see_their_context_on_either_thread(runtime: Start) -> None:
    seen: list[tuple[str, ToolContext | None]] = []

    def sync_tool(_args: dict[str, Any]) -> int:
        seen.append(("sync", tool_context()))
        return 1

    async def async_tool(_args: dict[str, Any]) -> int:
        await asyncio.sleep(0)
        seen.append(("async", tool_context()))
        return 2

    def agent() -> AgentOptions:
        model = Scripted((say("", ToolCall("s", {}, id="a"), ToolCall("t", {}, id="b")), say("ok")))
        tools = [Tool("s", "", {}, sync_tool), Tool("t", "", {}, async_tool)]
        return new_agent_options(model, tools=tools)

    rt = runtime(agents={"default": agent})
    future = rt.session("s1").run("go")
    assert future.get(timeout=TIMEOUT).output == "ok"
    rid = future.run_id
    assert seen == [
        ("sync", ToolContext(rid, "s1", "a", f"{rid}:1:0", 1)),
        ("async", ToolContext(rid, "s1", "b", f"{rid}:1:1", 1)),
    ]


async def _streaming_model(request: Request) -> Response:
    context = model_context()
    assert context is not None
    for chunk in ("str", "eam"):
        await asyncio.sleep(0)
        context.delta(chunk)
    return Response(message_assistant("stream"), usage={"output_tokens": 2})


def _sync_streaming_model(request: Request) -> Response:
    context = model_context()
    assert context is not None
    context.delta("sync")
    return Response(message_assistant("sync"))


def test_model_deltas_reach_subscribers_in_order(runtime: Start) -> None:
    rt = runtime(
        agents={
            "default": lambda: new_agent_options(_streaming_model),
            "sync": lambda: new_agent_options(_sync_streaming_model),
        }
    )
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="*")
    result = rt.session("s1").run("hi").get(timeout=TIMEOUT)
    assert result.usage == {"output_tokens": 2}
    recorder.wait_for("run.completed", TIMEOUT)
    assert recorder.types() == [
        "run.started",
        "model.requested",
        "model.delta",
        "model.delta",
        "model.responded",
        "run.completed",
    ]
    assert [e.seq for e in recorder.events] == list(range(6))
    assert "".join(e.data["text"] for e in recorder.events if e.type == "model.delta") == "stream"
    other = EventRecorder()
    rt.events.subscribe(other, pattern="model.delta", session_id="s2")
    rt.session("s2", agent="sync").run("hi").get(timeout=TIMEOUT)
    other.wait_for("model.delta", TIMEOUT)
    assert [e.data for e in other.events] == [{"step": 1, "text": "sync"}]
    assert rt.statistics().events_delivered >= 7
