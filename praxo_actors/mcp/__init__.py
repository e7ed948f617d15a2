"""Tools from MCP servers: ``MCPTools.stdio(...)`` and ``MCPTools.http(...)`` (extra ``mcp``).

``async with MCPTools.stdio("server-command") as mcp:`` starts the server, lists its tools and
gives them as :class:`~praxo_actors.agent.Tool`\\ s in ``mcp.tools``, for
:func:`~praxo_actors.agent.arun_agent` and the runtime (their handlers are ``async``). A call's
text content is the tool's ``str`` result and its structured content a JSON value; a tool's
``isError`` is ``ToolError("TOOL_FAILED", text)`` and a server that is gone (not started, dead,
disconnected, silent past ``timeout``) ``ToolError("MCP_UNAVAILABLE", reason)``: never a raw
exception or a hang. Opening a server that cannot be reached raises
:class:`MCPUnavailableError`.

Importing this module needs the official ``mcp`` SDK (2.x): without it the import raises
``ModuleNotFoundError`` naming ``mcp``.
"""

from __future__ import annotations

try:
    import mcp as _sdk  # noqa: F401 - fail here, with the extra named, not deep in a submodule
except ModuleNotFoundError as _missing:
    raise ModuleNotFoundError(
        "praxo_actors.mcp needs the MCP SDK: pip install 'praxo-actors[mcp]'", name="mcp"
    ) from _missing

from praxo_actors.mcp._errors import MCP_UNAVAILABLE, TOOL_FAILED, MCPUnavailableError
from praxo_actors.mcp._tools import DEFAULT_TIMEOUT, MCPTools

__all__ = [
    "DEFAULT_TIMEOUT",
    "MCP_UNAVAILABLE",
    "TOOL_FAILED",
    "MCPTools",
    "MCPUnavailableError",
]
