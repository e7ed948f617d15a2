"""The codes an MCP tool call fails with, and the error raised when a server cannot be reached."""

from __future__ import annotations

from praxo_actors._errors import PraxoError

__all__ = ["MCP_UNAVAILABLE", "TOOL_FAILED", "MCPUnavailableError"]

TOOL_FAILED = "TOOL_FAILED"
"""The server ran the tool and reported failure (``isError``), or refused the call."""
MCP_UNAVAILABLE = "MCP_UNAVAILABLE"
"""The server is gone: it did not start, died, closed the connection, or did not answer in time."""


class MCPUnavailableError(PraxoError):
    """An MCP server that cannot be reached when its tools are opened (code ``MCP_UNAVAILABLE``)."""

    def __init__(self, code: str = MCP_UNAVAILABLE, message: str = "") -> None:
        super().__init__(code, message)
