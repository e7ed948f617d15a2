"""The runtime's registered agents, as the protocol apps need them.

A protocol lists the agents a runtime serves (OpenAI's ``/v1/models``) and offers a client's
own tools to an agent's model (AG-UI's frontend tools). The runtime registers agents by name
and lists them (``runtime.agents()``); this module is the one place that reads them, and the
way a protocol registers an agent derived from another (the same options with more tools).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import PraxoError
from praxo_actors.agent import AgentOptions, Tool
from praxo_actors.codes import PROTOCOL_INVALID_INPUT, RUNTIME_UNKNOWN_AGENT

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime

__all__ = ["agent_names", "derive", "with_tools"]

_DERIVED = "~"  # in a derived agent's name: no registered agent of the user's is listed by it


def _registry(runtime: Runtime) -> tuple[Mapping[str, Callable[[], AgentOptions]], Any, Any]:
    """Return the runtime's agent factories and its per-session and durable names."""
    agents = runtime.agents()
    factories = {name: agent.options_factory for name, agent in agents.items()}
    per_session = {name for name, agent in agents.items() if agent.per_session}
    durable = {name for name, agent in agents.items() if agent.durable}
    return factories, per_session, durable


def agent_names(runtime: Runtime) -> list[str]:
    """Return the names of the agents registered with ``runtime`` (not derived ones), sorted."""
    return sorted(name for name in _registry(runtime)[0] if _DERIVED not in name)


def _derived_name(agent: str, key: str) -> str:
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{agent}{_DERIVED}{digest}"


def derive(
    runtime: Runtime, agent: str, key: str, change: Callable[[AgentOptions], AgentOptions]
) -> str:
    """Register (once per ``key``) agent ``agent`` with its options changed; return its name.

    The derived agent builds the base agent's options (per session and durable as it is)
    and applies ``change``; its runs are named after the base agent in telemetry.

    Raises:
        PraxoError: ``RUNTIME_UNKNOWN_AGENT``.
    """
    factories, per_session, durable = _registry(runtime)
    base = factories.get(agent)
    if base is None:
        raise PraxoError(RUNTIME_UNKNOWN_AGENT, f"no agent registered as {agent!r}")
    name = _derived_name(agent, key)
    if name in factories:
        return name

    def factory() -> AgentOptions:
        options = base()
        if not isinstance(options, AgentOptions):
            return options  # the runtime refuses it with its own code
        return change(dataclasses.replace(options, name=options.name or agent))

    runtime.register_agent(
        name, factory, per_session=agent in per_session, durable=agent in durable
    )
    return name


def with_tools(runtime: Runtime, agent: str, tools: Sequence[Tool], key: str) -> str:
    """Register (once per ``key``) agent ``agent`` with ``tools`` added; return its name.

    Raises:
        PraxoError: ``RUNTIME_UNKNOWN_AGENT``; ``PROTOCOL_INVALID_INPUT`` for a tool named as
            one of the agent's own.
    """
    added = tuple(tools)
    factories = _registry(runtime)[0]
    key = "tools:" + key
    if _derived_name(agent, key) in factories:
        return _derived_name(agent, key)
    base = factories.get(agent)
    own = base() if base is not None else None
    if isinstance(own, AgentOptions):
        clash = sorted({t.name for t in own.tools} & {t.name for t in added})
        if clash:
            raise PraxoError(
                PROTOCOL_INVALID_INPUT, f"agent {agent!r} has its own tool named {clash[0]!r}"
            )

    def change(options: AgentOptions) -> AgentOptions:
        return dataclasses.replace(options, tools=(*options.tools, *added))

    return derive(runtime, agent, key, change)
