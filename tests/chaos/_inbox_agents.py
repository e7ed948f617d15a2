"""The agent of the inbox kill tests: ``done <input>``, or an approval to ``send`` first."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from typing import Any

from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.middleware import require_approval
from praxo_actors.models import Request, Response, ToolCall, message_assistant


class Agents:
    """Model and tool; with ``hold``, the first model call waits until the process dies."""

    def __init__(self, hold: bool = False) -> None:
        self.hold = hold
        self.entered = threading.Event()
        self.calls: Counter[str] = Counter()
        self.sent: list[dict[str, Any]] = []

    async def model(self, request: Request) -> Response:
        text = str(request.messages[-1].content)
        self.calls[text] += 1
        if self.hold:
            self.entered.set()
            await asyncio.sleep(3600)
        if request.step == 1 and text == "mail ada":
            return Response(message_assistant("", [ToolCall("send", {"to": "ada"}, id="c1")]))
        return Response(message_assistant(f"done {text}"))

    def send(self, args: dict[str, Any]) -> str:
        self.sent.append(args)
        return "sent"

    def agent(self) -> AgentOptions:
        tools = [Tool("send", "", {}, self.send)]
        return new_agent_options(self.model, tools=tools, approval=require_approval(["send"]))
