"""A small MCP server (the SDK's ``MCPServer``, over stdio) with one tool: ``search``.

The research agent of ``fastapi_service.py`` reaches it through ``praxo_actors.mcp.MCPTools``.
It searches a few canned notes, so the example needs no network.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("praxo-research", log_level="WARNING")

NOTES = {
    "actors": "An actor owns its state and handles one message at a time.",
    "supervisors": "A supervisor restarts the children that crash, within a budget.",
    "mcp": "MCP offers tools, resources and prompts to models over stdio or HTTP.",
}


@server.tool()
def search(query: str) -> str:
    """Return the notes whose topic the query names, one per line."""
    found = [note for topic, note in NOTES.items() if topic in query.lower()]
    return "\n".join(found) or f"no notes on {query!r}"


if __name__ == "__main__":
    server.run()
