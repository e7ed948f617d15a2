"""An agent for the cluster's schedule tests (imported by path on the Ray workers): it answers
with its run's id, so that a session's history names each run it committed."""

from __future__ import annotations

from praxo_actors.agent import AgentOptions, new_agent_options
from praxo_actors.models import Request, Response, message_assistant


async def _named(request: Request) -> Response:
    return Response(message_assistant(f"run {request.run_id}"))


def named() -> AgentOptions:
    return new_agent_options(_named)
