"""An MCP server whose tools carry annotations and an output schema (the SDK's ``MCPServer``).

``python _annotated_server.py`` serves over stdio. Before serving it writes a line to its
stderr, so a test can see where that goes.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("praxo-annotated", log_level="WARNING")


class Status(BaseModel):
    branch: str
    clean: bool


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, title="Show the status"))
def status() -> Status:
    """Show the working tree's status."""
    return Status(branch="main", clean=True)


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def reset(to: str) -> str:
    """Reset the branch, throwing away what is not committed."""
    return f"reset to {to}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
def commit(message: str) -> str:
    """Record a commit (adds, destroys nothing)."""
    return f"committed: {message}"


@server.tool(structured_output=False)
def plain(text: str) -> str:
    """A tool with no annotations."""
    return text


if __name__ == "__main__":
    print("annotated server: starting", file=sys.stderr, flush=True)
    server.run()
