"""The A2A app: its JSON-RPC endpoint, over tasks that run sessions, and its agent card.

Built by :func:`praxo_actors.protocols.a2a_app` (imported then: it needs ``a2a-sdk`` and
Starlette, the ``protocols`` extra). A task is one run of the context's session; the endpoint
(:mod:`praxo_actors.protocols._a2a_rpc`) answers the protocol's JSON-RPC itself, and the
a2a-sdk gives the agent card's types and routes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_agent_card_routes
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from praxo_actors._errors import PraxoError
from praxo_actors.codes import RUNTIME_INVALID_INPUT
from praxo_actors.protocols._a2a_rpc import Endpoint
from praxo_actors.protocols._a2a_tasks import Runner, Tasks
from praxo_actors.protocols._http import Door, HostCheck
from praxo_actors.protocols._registered import agent_tools

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime

__all__ = ["build"]


def agent_card(runtime: Runtime, agent: str, url: str | None) -> AgentCard:
    """Return the card of ``agent``: its tools as skills, JSON-RPC at ``url``, streaming."""
    skills = [
        AgentSkill(id=t.name, name=t.name, description=t.description or t.name, tags=["tool"])
        for t in agent_tools(runtime, agent)
    ]
    if not skills:  # a card lists at least one skill: the conversation itself
        skills = [AgentSkill(id=agent, name=agent, description=f"Talk to {agent}.", tags=["chat"])]
    return AgentCard(
        name=agent,
        description=f"The praxo-actors agent {agent!r}.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(protocol_binding="JSONRPC", protocol_version="1.0", url=url or "/")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=skills,
    )


def build(
    runtime: Runtime, agent: str, card: Any, url: str | None, allowed_hosts: Iterable[str] | None
) -> HostCheck:
    """Return the A2A app of ``runtime``'s ``agent``."""
    if card is None:
        card = agent_card(runtime, agent, url)
    elif not isinstance(card, AgentCard):
        raise PraxoError(RUNTIME_INVALID_INPUT, "card must be an a2a.types.AgentCard")
    else:
        agent_tools(runtime, agent)  # the agent is registered
    tasks = Tasks()
    endpoint = Endpoint(tasks, Runner(runtime, agent, tasks))
    cards = create_agent_card_routes(card) if url is not None else [_card_here(card)]
    return HostCheck(Door("/", endpoint, Starlette(routes=cards)), allowed_hosts)


def _card_here(card: AgentCard) -> Route:
    """Return the card's route, telling clients to use the URL the card was fetched from."""

    async def get_card(request: Request) -> Response:
        here = AgentCard()
        here.CopyFrom(card)
        # The full URL (a mount's prefix included) less the card's own path.
        fetched = str(request.url.replace(query="", fragment=""))
        base = fetched.removesuffix(AGENT_CARD_WELL_KNOWN_PATH) + "/"
        for interface in here.supported_interfaces:
            interface.url = base
        return JSONResponse(agent_card_to_dict(here))

    return Route(AGENT_CARD_WELL_KNOWN_PATH, get_card, methods=["GET"])
