"""``mcp_server``: the registered agents as the tools of an MCP server (built, and its SDK
imported, on call)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from praxo_actors.protocols._a2a import require_runtime, require_sdk

if TYPE_CHECKING:
    from praxo_actors.cluster import ClusterRuntime
    from praxo_actors.runtime import Runtime

__all__ = ["mcp_server"]


def mcp_server(
    runtime: Runtime | ClusterRuntime,
    agents: Iterable[str] | None = None,
    *,
    name: str = "praxo",
    allowed_hosts: Iterable[str] | None = None,
) -> Any:
    """Return an MCP server (the ``mcp`` SDK's ``MCPServer``) whose tools run ``runtime``'s agents.

    Each agent (every registered one, or those named) is a tool of its name, taking
    ``{"input": str, "session_id"?: str}``: a call runs ``input`` in session ``session_id``
    (a new session when it is left out) and answers with structured content
    ``{"output", "session_id", "run_id", "status", "structured", "interrupt"}`` (its output
    schema is listed with the tool; the text content is the same, as JSON). A run that fails
    is a tool error whose text ends with ``CODE: message``; a call the client cancels cancels
    the run (over a ``ClusterRuntime`` the run goes on).
    A run that stops for an approval or an ``Interrupt`` answers with ``status``
    ``"interrupted"`` and the ``interrupt``'s payload (answer it through the runtime).

    Serve it over stdio with ``server.run()`` (nothing but the protocol is written to
    stdout) or over streamable HTTP with ``server.streamable_http_app()`` (an ASGI app at
    ``/mcp``, served with :func:`praxo_actors.serving.serve`; mounted in another app, run
    ``server.session_manager.run()`` in that app's lifespan). Over HTTP a call is answered
    with JSON (``json_response=False``: the SDK's event stream); a client that leaves before
    its answer cancels the call. The HTTP app answers only the
    ``Host`` it is served on (421 ``PROTOCOL_HOST_REFUSED``), as the observer does.

    Args:
        runtime: The runtime whose agents to serve.
        agents: The agents' names (None: every registered agent).
        name: The server's name, told to clients.
        allowed_hosts: ``host`` or ``host:port`` entries accepted in ``Host`` by the HTTP app
            (None: the address served on, and the loopback names for a loopback address).

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a ``runtime`` that is neither a ``Runtime``
            nor a ``ClusterRuntime``, or a name that cannot be an MCP tool's;
            ``RUNTIME_UNKNOWN_AGENT`` for an agent not registered.
        ModuleNotFoundError: ``mcp`` or Starlette is not installed (the ``protocols`` extra).
    """
    require_sdk("mcp", "starlette")
    require_runtime(runtime)
    from praxo_actors.protocols._mcp_server_app import build

    return build(cast("Runtime", runtime), agents, name, allowed_hosts)
