"""The research agent of ``fastapi_service.py``: an MCP tool and another agent as its tools.

``research`` calls the MCP server's ``search`` (``examples/research_tools.py``, over stdio),
then hands what it found to the ``summarizer`` agent through :func:`agent_tool`: a child
session of the caller's, supervised by the same runtime, cancelled with its caller. The models
are scripted stand-ins (no network); pass real ones to :func:`register` in a real service.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.models import ModelError, ToolCall, message_assistant, response
from praxo_actors.models import Request as ModelRequest
from praxo_actors.models import Response as ModelResponse
from praxo_actors.runtime import Runtime, agent_tool

RESEARCH = "research"
SUMMARIZER = "summarizer"
SERVER = [sys.executable, str(Path(__file__).with_name("research_tools.py"))]

Model = Callable[[ModelRequest], Awaitable[ModelResponse | ModelError]]


async def research_model(request: ModelRequest) -> ModelResponse | ModelError:
    """Search, then summarise what was found, then answer with the summary."""
    last = request.messages[-1]
    if last.role == "user":
        call = ToolCall("search", {"query": last.content}, id="search-1")
        return response(message_assistant("", [call]))
    if last.tool_call_id == "search-1":
        call = ToolCall("summarize", {"input": last.content}, id="summarize-1")
        return response(message_assistant("", [call]))
    return response(message_assistant(f"research: {last.content}"))


async def summarizer_model(request: ModelRequest) -> ModelResponse | ModelError:
    """Answer with the first line of what it was given."""
    text = str(request.messages[-1].content)
    return response(message_assistant(f"summary: {text.splitlines()[0] if text else ''}"))


def register(
    runtime: Runtime,
    mcp_tools: list[Tool],
    model: Model = research_model,
    summarizer: Model = summarizer_model,
) -> None:
    """Register ``summarizer`` and ``research`` (the MCP tools and ``summarize``) on ``runtime``."""
    runtime.register_agent(SUMMARIZER, lambda: new_agent_options(summarizer))
    # The child session is "<caller>-summarize" (a "/" would need escaping in the example's paths).
    summarize = agent_tool(
        SUMMARIZER,
        name="summarize",
        description="Summarise a text.",
        session="{session_id}-{name}",
    )
    runtime.register_agent(
        RESEARCH,
        lambda: new_agent_options(
            model, tools=[*mcp_tools, summarize], instructions="Research, then summarise."
        ),
    )
