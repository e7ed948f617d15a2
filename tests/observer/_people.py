"""Helpers of the observer tests for what people do: an agent that asks before it mails."""

from __future__ import annotations

from typing import Any

from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.middleware import require_approval
from praxo_actors.models import Request, Response, ToolCall, message_assistant

__all__ = ["RECIPIENT", "mailer"]

RECIPIENT = "ada@example.com"


def _mail_model(request: Request) -> Response:
    """Ask to mail the recipient, then say what the tool answered."""
    if request.step == 1:
        call = ToolCall("send_mail", {"to": RECIPIENT}, id="m1")
        return Response(message_assistant("", [call]))
    return Response(message_assistant(f"Done: {request.messages[-1].content}"))


def mailer(sent: list[Any]) -> Any:
    """Return a factory of the options of an agent whose ``send_mail`` needs approval."""

    def options() -> Any:
        tool = Tool("send_mail", "Send a mail", {}, lambda args: sent.append(args) or "sent")
        return new_agent_options(
            _mail_model, tools=[tool], approval=require_approval(["send_mail"])
        )

    return options
