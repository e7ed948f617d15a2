"""Serve a runtime's agents as an MCP server over stdio (``python _mcp_child.py``).

Nothing but the protocol is written to stdout: the test reads every line of it as JSON-RPC.
"""

from __future__ import annotations

from praxo_actors.agent import new_agent_options
from praxo_actors.models import ModelError, Request, Response, message_assistant
from praxo_actors.protocols import mcp_server
from praxo_actors.runtime import Runtime
from praxo_actors.testing import FunctionModel


def chat(request: Request) -> Response | ModelError:
    """Fail on "fail"; else say what the model saw."""
    if request.messages[-1].content == "fail":
        return ModelError("MODEL_UNAVAILABLE", "the model is down")
    return Response(message_assistant(" | ".join(m.content for m in request.messages)))


if __name__ == "__main__":
    runtime = Runtime.start(idle_timeout=None)
    try:
        runtime.register_agent("echo", lambda: new_agent_options(FunctionModel(chat)))
        mcp_server(runtime).run()
    finally:
        runtime.stop()
