"""``MCPTools``: the tools of one MCP server (stdio or streamable HTTP) as ``Tool``s."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, TextIO

import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from praxo_actors.agent import Tool, ToolError
from praxo_actors.mcp._connection import ClientFactory, Connection, entered
from praxo_actors.mcp._errors import MCP_UNAVAILABLE, MCPUnavailableError
from praxo_actors.mcp._results import ServerGone, failure, tool_value

__all__ = ["MCPTools"]

DEFAULT_TIMEOUT = 60.0
"""Seconds a call, or opening the connection, may take before it is ``MCP_UNAVAILABLE``."""


class _Handler:
    """The handler of one MCP tool: an ``async`` callable of the call's arguments."""

    __slots__ = ("name", "owner")

    def __init__(self, owner: MCPTools, name: str) -> None:
        self.owner = owner
        self.name = name

    async def __call__(self, arguments: dict[str, Any]) -> Any:
        """Call the tool on the server; return its result, or a ``ToolError``."""
        return await self.owner.call(self.name, arguments)


def _annotations(tool: mcp_types.Tool) -> dict[str, Any] | None:
    """Return the tool's annotations under their MCP names (``readOnlyHint``...), or None."""
    if tool.annotations is None:
        return None
    return tool.annotations.model_dump(by_alias=True, exclude_none=True, mode="json")


class MCPTools:
    """The tools an MCP server offers, open while ``async with`` lasts.

    Make one with :meth:`stdio` or :meth:`http`. Inside ``async with``, :attr:`tools` holds a
    :class:`~praxo_actors.agent.Tool` per server tool (its name, description and input schema);
    a call goes to the server and returns its text (``str``) or structured content (JSON). A
    tool that reports ``isError`` returns ``ToolError("TOOL_FAILED", text)``; a server that is
    gone, or silent for ``timeout`` seconds, ``ToolError("MCP_UNAVAILABLE", reason)``.

    One ``MCPTools`` serves any number of concurrent runs: open it on the runtime's loop (put
    ``Runtime.open`` inside the ``async with``) and give its tools to every agent. A call from
    another event loop is sent to the one it was opened on.
    """

    def __init__(
        self, open_client: ClientFactory, where: str, timeout: float, connect_timeout: float
    ) -> None:
        for name, value in (("timeout", timeout), ("connect_timeout", connect_timeout)):
            if not value > 0:
                raise ValueError(f"{name} must be positive, got {value!r}")
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._connection = Connection(open_client, where)
        self._tools: list[Tool] | None = None
        self._schemas: dict[str, dict[str, Any] | None] = {}

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_TIMEOUT,
        stderr: TextIO | None = None,
    ) -> MCPTools:
        """Run ``command args…`` as an MCP server speaking over its stdin and stdout.

        Args:
            command: The executable (found on ``PATH`` if not a path).
            args: Its arguments.
            env: Variables added to the SDK's safe default environment (``PATH``, ``HOME``, …).
            timeout: Seconds each call may take.
            connect_timeout: Seconds starting the server and listing its tools may take.
            stderr: Where the server's stderr goes: a file open for writing (one with a file
                descriptor: a log file, ``open(os.devnull, "w")``); None: the host's
                ``sys.stderr`` when the server starts.
        """
        params = StdioServerParameters(
            command=command, args=list(args), env=dict(env) if env is not None else None
        )
        if stderr is None:
            return cls(lambda: Client(params), f"stdio {command}", timeout, connect_timeout)
        if not hasattr(stderr, "write") or not hasattr(stderr, "fileno"):
            raise TypeError("stderr must be a file open for writing, or None")
        where = f"stdio {command}"
        return cls(lambda: Client(stdio_client(params, stderr)), where, timeout, connect_timeout)

    @classmethod
    def http(
        cls,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_TIMEOUT,
    ) -> MCPTools:
        """Connect to the MCP server at ``url`` over streamable HTTP.

        Args:
            url: The server's endpoint, e.g. ``http://127.0.0.1:8000/mcp``.
            headers: Sent with every request (e.g. ``Authorization``).
            timeout: Seconds each call may take.
            connect_timeout: Seconds connecting and listing the tools may take.
        """

        def open_client() -> contextlib.AbstractAsyncContextManager[Client]:
            http = create_mcp_http_client(headers=dict(headers) if headers else None)
            return entered(http, Client(streamable_http_client(url, http_client=http)))

        return cls(open_client, url, timeout, connect_timeout)

    async def __aenter__(self) -> MCPTools:
        """Start or connect to the server and list its tools.

        Raises:
            MCPUnavailableError: The server did not start, refused the connection, or did not
                answer within ``connect_timeout`` seconds (code ``MCP_UNAVAILABLE``).
        """
        if self._tools is not None or self._connection.loop is not None:
            raise RuntimeError("an MCPTools is opened once")
        try:
            await self._connection.open(self.connect_timeout)
        except ServerGone as exc:
            raise MCPUnavailableError(MCP_UNAVAILABLE, str(exc)) from None
        listing = self._connection.listing
        self._schemas = {tool.name: tool.output_schema for tool in listing}
        self._tools = [self._tool(tool) for tool in listing]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the session; a stdio server's process is ended (bounded)."""
        await self._connection.close()

    def _tool(self, tool: mcp_types.Tool) -> Tool:
        return Tool(
            name=tool.name,
            description=tool.description or tool.title or "",
            parameters=dict(tool.input_schema),
            handler=_Handler(self, tool.name),
            text_results=True,  # an MCP text result is text for the model, not a JSON string
            annotations=_annotations(tool),
            output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        )

    @property
    def tools(self) -> list[Tool]:
        """The server's tools, in the order it listed them (a new list each time).

        Raises:
            MCPUnavailableError: Read before ``async with`` opened the connection.
        """
        if self._tools is None:
            raise MCPUnavailableError(MCP_UNAVAILABLE, "MCPTools is not open: use `async with`")
        return list(self._tools)

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call tool ``name`` with ``arguments``; return what its ``Tool``'s handler returns.

        Returns:
            The tool's text (``str``) or structured content (JSON), or a ``ToolError`` with
            code ``TOOL_FAILED`` or ``MCP_UNAVAILABLE``.
        """
        loop = self._connection.loop
        if loop is None:
            return ToolError(MCP_UNAVAILABLE, "MCPTools is not open: use `async with`")
        if asyncio.get_running_loop() is not loop:
            return await self._call_across(loop, name, arguments)
        try:
            result = await self._connection.call(name, arguments, self.timeout)
        except Exception as exc:
            error = failure(exc)
            if error is None:
                raise
            return error
        return tool_value(result, self._schemas.get(name))

    async def _call_across(
        self, loop: asyncio.AbstractEventLoop, name: str, arguments: dict[str, Any]
    ) -> Any:
        # The SDK's streams belong to the loop they were made on: run the call there.
        try:
            future = asyncio.run_coroutine_threadsafe(self.call(name, arguments), loop)
        except RuntimeError:  # that loop is closed
            return ToolError(MCP_UNAVAILABLE, f"{self._connection.where}: its event loop is closed")
        try:
            # The call bounds itself; the margin covers a loop too busy to start it.
            return await asyncio.wait_for(asyncio.wrap_future(future), self.timeout + 5.0)
        except TimeoutError:
            future.cancel()
            return ToolError(
                MCP_UNAVAILABLE, f"{self._connection.where}: its event loop did not answer"
            )
