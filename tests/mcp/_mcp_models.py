"""A model for the MCP runtime tests: echo the session's word through the server's ``echo``."""

from __future__ import annotations

from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.testing import FunctionModel


def tool_text(content: object) -> str:
    """Return a tool message's text: an MCP text result reaches the model as it is, unquoted."""
    return str(content)


def session_echo_model() -> FunctionModel:
    """Return a model that asks ``echo`` for the input's last word, then reports the answer."""

    def reply(request: Request) -> Response:
        last = request.messages[-1]
        if last.role == "tool":
            return Response(message_assistant(f"server said: {tool_text(last.content)}"))
        word = str(last.content).split()[-1]
        return Response(message_assistant("", [ToolCall("echo", {"text": word})]))

    return FunctionModel(reply)
