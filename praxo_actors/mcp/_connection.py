"""One connection to an MCP server, owned by one task, that any task on its loop may call through.

The SDK's transports run their pipe or HTTP readers in an anyio task group whose host is the task
that entered the client; when the server dies, that group fails and cancels its host. So the
client is entered by a task of its own (the owner), never by the caller's: a dead server ends
the owner, and every call waiting on it returns at once instead of waiting out its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import mcp_types
from mcp import Client, MCPError

from praxo_actors._log import get_logger
from praxo_actors.mcp._results import GONE, ServerGone

__all__ = ["Connection"]

# The library's logger (stdlib logging, silent unless the host configures it): structlog's own
# default would print to stdout, which a host that is itself a stdio MCP server speaks on.
_log = get_logger("praxo_actors.mcp")

# A server listing more pages than this is taken to be looping on its cursor.
_MAX_PAGES = 1000
# stdio shutdown waits up to 2 s for the server to exit on closed stdin, 2 s more after SIGTERM
# and 2 s after SIGKILL (mcp.client.stdio); past that the owner is cancelled.
_CLOSE_TIMEOUT = 10.0

ClientFactory = Callable[[], contextlib.AbstractAsyncContextManager[Client]]


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _consume(task: asyncio.Future[Any]) -> None:
    # A call abandoned on timeout or on a dead server may still fail; its error was reported.
    if not task.cancelled():
        task.exception()


class Connection:
    """A live MCP client session: its tool listing and calls bounded in time.

    Args:
        open_client: Returns the SDK client's async context manager (not yet entered).
        where: The server, as people would name it in an error message.
    """

    def __init__(self, open_client: ClientFactory, where: str) -> None:
        self._open_client = open_client
        self.where = where
        self.listing: list[mcp_types.Tool] = []
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._reason = "the connection is not open"
        self.loop: asyncio.AbstractEventLoop | None = None

    async def open(self, timeout: float) -> None:
        """Connect, list the server's tools, and return; raise ``ServerGone`` if that fails."""
        self.loop = asyncio.get_running_loop()
        self._owner = asyncio.create_task(self._own(), name=f"praxo-mcp {self.where}")
        ready = asyncio.ensure_future(self._ready.wait())
        try:
            await asyncio.wait(
                {ready, self._owner}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            ready.cancel()
        if not self._ready.is_set():
            if not self._owner.done():
                # ``timeout`` bounds open() as a whole: a server that never initialised gets
                # no graceful close to wait for. The owner's cancellation ends its process or
                # HTTP session on this loop (the SDK shields that), without the caller.
                self._reason = f"no answer within {timeout:g} s"
                self._stop.set()
                self._owner.cancel()
                self._owner.add_done_callback(_consume)
            raise ServerGone(f"{self.where}: {self._reason}")

    async def _own(self) -> None:
        try:
            async with self._open_client() as client:
                self.listing = await self._list(client)
                self._client = client
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:  # the transport's task group failed: the server is gone
            self._reason = _describe(exc)
            _log.info("mcp.connection_ended", server=self.where, reason=self._reason)
        finally:
            self._client = None
            if self._reason == "the connection is not open":
                self._reason = "the connection is closed"

    @staticmethod
    async def _list(client: Client) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools
        raise ServerGone(f"tools/list did not end after {_MAX_PAGES} pages")

    async def call(
        self, name: str, arguments: dict[str, Any], timeout: float
    ) -> mcp_types.CallToolResult:
        """Call tool ``name``; raise ``ServerGone`` if the server is gone or silent ``timeout`` s.

        Other exceptions of the SDK (a JSON-RPC error, a refused result) propagate.
        """
        client, owner = self._client, self._owner
        if client is None or owner is None or owner.done():
            raise ServerGone(f"{self.where}: {self._reason}")
        call = asyncio.ensure_future(client.call_tool(name, arguments))
        try:
            await asyncio.wait({call, owner}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not call.done():
                call.cancel()
                call.add_done_callback(_consume)
        if not call.done() or call.cancelled():
            if owner.done():
                raise ServerGone(f"{self.where}: {self._reason}")
            raise ServerGone(f"{self.where}: no answer to {name!r} within {timeout:g} s")
        exc = call.exception()
        if exc is None:
            return call.result()
        if owner.done() or isinstance(exc, GONE):
            raise ServerGone(f"{self.where}: {self._reason if owner.done() else _describe(exc)}")
        if isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED:
            await self._closed_or_refused(client, owner, exc, timeout)
        raise exc

    async def _closed_or_refused(
        self, client: Client, owner: asyncio.Task[None], exc: MCPError, timeout: float
    ) -> None:
        """Tell a closed connection from a live server's JSON-RPC error that uses the same code
        (-32000, the usual "server error"): a request fails at once on a closed connection,
        so a fresh ``tools/list`` (which the server answered at open) tells them apart.

        Raises:
            ServerGone: The connection is closed.
        """
        probe = asyncio.ensure_future(client.list_tools(cache_mode="bypass"))
        try:
            await asyncio.wait({probe, owner}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not probe.done():
                probe.cancel()
                probe.add_done_callback(_consume)
        if not probe.done() or probe.cancelled() or probe.exception() is not None:
            reason = self._reason if owner.done() else _describe(exc)
            raise ServerGone(f"{self.where}: {reason}")

    async def close(self) -> None:
        """End the session and the server's process or HTTP session; wait for it, bounded."""
        owner = self._owner
        if owner is None:
            return
        self._stop.set()
        await asyncio.wait({owner}, timeout=_CLOSE_TIMEOUT)
        if not owner.done():
            owner.cancel()
            await asyncio.wait({owner}, timeout=_CLOSE_TIMEOUT)


@contextlib.asynccontextmanager
async def entered(*managers: contextlib.AbstractAsyncContextManager[Any]) -> AsyncIterator[Any]:
    """Enter ``managers`` in order and yield the last one's value; exit them in reverse."""
    async with contextlib.AsyncExitStack() as stack:
        value = None
        for manager in managers:
            value = await stack.enter_async_context(manager)
        yield value
