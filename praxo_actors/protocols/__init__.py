"""The protocols clients speak: each an ASGI app (or server) over a runtime (extra ``protocols``).

``a2a_app(runtime)`` serves an agent to A2A clients; ``mcp_server(runtime)`` serves the
registered agents as MCP tools. Their SDKs are imported when an app is built, never by
``import praxo_actors.protocols``. See docs/protocols-a2a.md and docs/protocols-mcp-server.md.
"""

from __future__ import annotations

from praxo_actors.protocols._a2a import a2a_app
from praxo_actors.protocols._mcp_server import mcp_server

__all__ = [
    "a2a_app",
    "mcp_server",
]
