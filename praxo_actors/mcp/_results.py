"""Turn an MCP ``tools/call`` result, or the exception a call raised, into a tool's return value."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import mcp_types
from mcp import MCPError
from pydantic import ValidationError

from praxo_actors.agent import ToolError
from praxo_actors.mcp._errors import MCP_UNAVAILABLE, TOOL_FAILED

__all__ = ["GONE", "ServerGone", "failure", "tool_value"]

GONE: tuple[type[Exception], ...] = (
    OSError,  # a broken pipe, a refused or reset socket
    anyio.ClosedResourceError,  # the SDK's streams, once its transport has ended
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    httpx2.TransportError,  # streamable HTTP: connect, read and protocol failures
)
"""What the SDK and its transports raise once a connection is broken."""


class ServerGone(Exception):  # named after the state, like trio's ClosedResourceError
    """The connection to the server ended (or never answered); ``str(self)`` says how."""


def _text(content: list[mcp_types.ContentBlock]) -> str:
    return "\n".join(block.text for block in content if isinstance(block, mcp_types.TextContent))


def _unwrap(value: Any, output_schema: dict[str, Any] | None) -> Any:
    # The SDK wraps a tool's non-object return as {"result": value} and lists an output schema
    # with that one property; the model gets the value the tool returned.
    if (
        isinstance(value, dict)
        and value.keys() == {"result"}
        and isinstance(output_schema, dict)
        and isinstance(output_schema.get("properties"), dict)
        and output_schema["properties"].keys() == {"result"}
    ):
        return value["result"]
    return value


def tool_value(result: mcp_types.CallToolResult, output_schema: dict[str, Any] | None) -> Any:
    """Return what the agent loop sends the model for ``result``.

    ``isError`` is ``ToolError("TOOL_FAILED", <its text>)``; structured content is its JSON
    value; text content is one ``str`` (blocks joined by newlines); other content (images,
    resources) the list of its blocks as JSON objects.
    """
    if result.is_error:
        return ToolError(TOOL_FAILED, _text(result.content) or "the tool reported an error")
    if result.structured_content is not None:
        return _unwrap(result.structured_content, output_schema)
    if all(isinstance(block, mcp_types.TextContent) for block in result.content):
        return _text(result.content)
    return [
        block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content
    ]


def failure(exc: Exception) -> ToolError | None:
    """Return the ``ToolError`` a call's exception stands for, or None for one not the server's.

    A connection that ended is ``MCP_UNAVAILABLE``; a JSON-RPC error from a live server (any
    code, -32000 included), a result the SDK refused (bad shape, structured content against
    its schema) ``TOOL_FAILED``.
    """
    if isinstance(exc, ServerGone):
        return ToolError(MCP_UNAVAILABLE, str(exc))
    if isinstance(exc, MCPError):
        # The connection tells a closed connection (-32000 too) from the server's own -32000
        # before it gets here (ServerGone): an MCPError that reaches here is the server's.
        return ToolError(TOOL_FAILED, f"{exc.message} (MCP error {exc.code})")
    if isinstance(exc, GONE):
        return ToolError(MCP_UNAVAILABLE, f"the connection failed: {type(exc).__name__}: {exc}")
    if isinstance(exc, ValidationError | RuntimeError):
        return ToolError(TOOL_FAILED, f"the server's result was refused: {exc}")
    return None
