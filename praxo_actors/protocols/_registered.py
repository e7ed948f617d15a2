"""The runtime's registered agents, read in one place: their names and their tools.

The runtime keeps the factories it was given by ``register_agent``; the A2A card lists an
agent's tools and the MCP server offers each agent. This module is the one place that reads
them (through ``runtime.agents()``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import PraxoError
from praxo_actors.agent import AgentOptions, Tool
from praxo_actors.codes import RUNTIME_UNKNOWN_AGENT

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime

__all__ = ["agent_tools", "registered_agents"]


def _factories(runtime: Runtime) -> Mapping[str, Callable[[], Any]]:
    return {name: agent.options_factory for name, agent in runtime.agents().items()}


def registered_agents(runtime: Runtime) -> list[str]:
    """Return the names of the agents registered with ``runtime`` (not derived ones), sorted."""
    return sorted(name for name in _factories(runtime) if "~" not in name)


def agent_tools(runtime: Runtime, agent: str) -> tuple[Tool, ...]:
    """Return the tools of agent ``agent`` (built from its factory once more).

    Raises:
        PraxoError: ``RUNTIME_UNKNOWN_AGENT``.
    """
    factory = _factories(runtime).get(agent)
    if factory is None:
        raise PraxoError(RUNTIME_UNKNOWN_AGENT, f"no agent registered as {agent!r}")
    options = factory()
    return tuple(options.tools) if isinstance(options, AgentOptions) else ()
