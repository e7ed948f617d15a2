"""The MCP server of a runtime's agents: one tool per agent, built with the SDK's ``MCPServer``.

Built by :func:`praxo_actors.protocols.mcp_server` (imported then: it needs ``mcp``).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, Field
from starlette.applications import Starlette

from praxo_actors._errors import PraxoError
from praxo_actors.codes import RUNTIME_INVALID_INPUT
from praxo_actors.protocols._http import CancelOnDisconnect, HostCheck
from praxo_actors.protocols._registered import agent_tools, registered_agents

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime

__all__ = ["AgentAnswer", "build"]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")  # what MCP clients accept as a tool's name


class AgentAnswer(BaseModel):
    """What a call of an agent's tool answers (its structured content)."""

    output: str = Field(description="The run's final text.")
    session_id: str = Field(description="The session the run ran in: pass it to go on.")
    run_id: str = Field(description="The run's id.")
    status: str = Field(description='"completed", or "interrupted" when it waits for an answer.')
    structured: Any = Field(default=None, description="The run's typed output, if it has one.")
    interrupt: Any = Field(default=None, description="What an interrupted run asks.")


class _Server(MCPServer[Any]):
    """The SDK's server, whose streamable HTTP app answers only the hosts it is served on."""

    def __init__(self, name: str, allowed_hosts: Iterable[str] | None) -> None:
        super().__init__(name, log_level="WARNING")
        self._allowed_hosts = None if allowed_hosts is None else tuple(allowed_hosts)

    def streamable_http_app(self, **options: Any) -> Starlette:
        """Return the SDK's streamable HTTP app (at ``/mcp``), behind the ``Host`` check.

        A call is answered with JSON (``json_response=True``, unless given): a fraction of
        what a server-sent events response per call costs. A client that leaves before its
        answer (how an MCP client cancels a call over HTTP) cancels the call, and its run.
        With ``allowed_hosts``, the SDK's own check (of ``Host`` and ``Origin``) allows the
        same hosts, unless ``transport_security`` is given.
        """
        if self._allowed_hosts is not None and "transport_security" not in options:
            options["transport_security"] = _security(self._allowed_hosts)
        options.setdefault("json_response", True)
        app = super().streamable_http_app(**options)
        app.add_middleware(CancelOnDisconnect)
        app.add_middleware(HostCheck, allowed_hosts=self._allowed_hosts)
        return app


def _security(allowed_hosts: tuple[str, ...]) -> TransportSecuritySettings:
    """Return the SDK's settings allowing ``allowed_hosts`` (any port for an entry without)."""
    hosts: list[str] = []
    for entry in allowed_hosts:
        has_port = entry.rsplit("]", 1)[-1].count(":") == 1
        hosts.extend([entry] if has_port else [entry, f"{entry}:*"])
    origins = [f"{scheme}://{host}" for scheme in ("http", "https") for host in hosts]
    return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)


def _tool(runtime: Runtime, agent: str) -> Callable[..., Any]:
    """Return the tool function that runs ``agent``."""

    async def run_agent(input: str, session_id: str | None = None) -> AgentAnswer:
        session = session_id or f"mcp-{uuid.uuid4().hex}"
        try:
            result = await runtime.session(session, agent).arun(input)
        except PraxoError as exc:
            raise ToolError(f"{exc.code}: {exc.message}") from None
        except Exception as exc:  # a callback's own exception
            raise ToolError(f"AGENT_CALLBACK_EXCEPTION: {type(exc).__name__}: {exc}") from None
        return AgentAnswer(
            output=result.output,
            session_id=session,
            run_id=result.run_id,
            status=result.status,
            structured=result.structured,
            interrupt=result.interrupt,
        )

    return run_agent


def build(
    runtime: Runtime, agents: Iterable[str] | None, name: str, allowed_hosts: Iterable[str] | None
) -> MCPServer[Any]:
    """Return the MCP server of ``runtime``'s ``agents``."""
    names = registered_agents(runtime) if agents is None else list(agents)
    server = _Server(name, allowed_hosts)
    for agent in names:
        if not isinstance(agent, str) or not _TOOL_NAME.match(agent):
            raise PraxoError(RUNTIME_INVALID_INPUT, f"{agent!r} cannot be an MCP tool's name")
        tools = agent_tools(runtime, agent)  # RUNTIME_UNKNOWN_AGENT
        offers = f" Its tools: {', '.join(t.name for t in tools)}." if tools else ""
        description = (
            f"Run the agent {agent!r} on `input` (the user's message). Pass the `session_id` "
            f"of an earlier answer to go on with that conversation.{offers}"
        )
        server.add_tool(_tool(runtime, agent), name=agent, description=description)
    return server
