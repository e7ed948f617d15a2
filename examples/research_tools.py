"""A small MCP server (the SDK's ``MCPServer``, over stdio) with one tool: ``search``.

The research agent of ``fastapi_service.py`` reaches it through ``praxo_actors.mcp.MCPTools``.
It searches a few canned notes, so the example needs no network.
"""

from __future__ import annotations

import os
import signal
import sys

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


def _interrupted(_signum: int, _frame: object) -> None:
    """Exit at once on Ctrl-C: the stdio transport reads stdin in a worker thread that no
    cancellation reaches, so a normal shutdown would wait for the next line of input. The
    server keeps no state, so there is nothing to save."""
    sys.stdout.flush()
    os._exit(130)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, _interrupted)
    server.run()
