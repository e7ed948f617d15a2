"""An agent factory the cluster's protocol test registers by import path (Ray workers import it)."""

from __future__ import annotations

from praxo_actors.agent import AgentOptions, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant


def _asking(request: Request) -> Response:
    last = request.messages[-1]
    if last.role != "user":
        return Response(message_assistant(f"result: {last.content}"))
    if "confirm" in {spec.name for spec in request.tools}:
        return Response(message_assistant("Let me see.", [ToolCall("confirm", {}, id="c1")]))
    return Response(message_assistant(f"You said: {last.content}"))


def asking() -> AgentOptions:
    """Call the client's ``confirm`` tool when it is offered; then say its result."""
    return new_agent_options(_asking)
