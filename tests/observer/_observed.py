"""Helpers of the observer tests: a demo-like agent, and a runtime served by its observer."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx

from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.observer import ObserverServer
from praxo_actors.runtime import Runtime

__all__ = ["EMAIL", "TIMEOUT", "Observed", "demo_agent"]

TIMEOUT = 10.0
EMAIL = "grace@example.com"


async def demo_model(request: Request) -> Response:
    """Multiply two numbers with the calculator tool, then answer (after a little latency)."""
    await asyncio.sleep(0.005)  # a model's latency: the work, not a wait for anything
    results = [m for m in request.messages[-1:] if m.role == "tool"]
    if not results:
        call = ToolCall("calculator", {"a": 6, "b": 7}, id="c1")
        return Response(message_assistant("", [call]))
    return Response(message_assistant(f"The product is {results[0].content}."))


CALCULATOR = Tool(
    "calculator", "Multiply two numbers.", {"type": "object"}, lambda a: a["a"] * a["b"]
)


def demo_agent() -> Any:
    """Return the options of the demo-like agent."""
    return new_agent_options(demo_model, tools=[CALCULATOR])


@dataclass
class Observed:
    """A runtime, its observer served on loopback, and an HTTP client for it."""

    runtime: Runtime
    server: ObserverServer
    client: httpx.Client

    def run(self, session_id: str, text: str = "multiply") -> Any:
        """Run one turn of ``session_id`` to completion."""
        return self.runtime.session(session_id, agent="demo").run(text).get(timeout=TIMEOUT)

    def state(self, **params: Any) -> dict[str, Any]:
        """Return ``GET /api/state`` (which must answer 200)."""
        reply = self.client.get("/api/state", params=params)
        assert reply.status_code == 200, reply.text
        body: dict[str, Any] = reply.json()
        return body
