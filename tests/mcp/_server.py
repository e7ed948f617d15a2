"""An MCP server for the tests, written with the SDK's ``MCPServer``.

``python _server.py`` serves over stdio; ``python _server.py http`` serves streamable HTTP on
127.0.0.1, on a port the kernel picks, printed as the first line of stdout once it listens.
"""

from __future__ import annotations

import os
import socket
import sys

import anyio
from mcp import MCPError
from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

server = MCPServer("praxo-test", log_level="WARNING")


class Address(BaseModel):
    city: str
    postcode: str = Field(pattern=r"^[0-9]{5}$")


class Customer(BaseModel):
    name: str
    address: Address


class Line(BaseModel):
    sku: str
    quantity: int = Field(ge=1)


class Order(BaseModel):
    customer: Customer
    lines: list[Line] = Field(min_length=1)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(structured_output=False)
def shout(text: str) -> str:
    """Return the text in capitals, as plain text content."""
    return text.upper()


@server.tool()
def place(order: Order) -> dict[str, object]:
    """Place an order: a customer with an address, and its lines."""
    return {
        "city": order.customer.address.city,
        "items": sum(line.quantity for line in order.lines),
        "skus": [line.sku for line in order.lines],
    }


@server.tool()
def fail(reason: str) -> str:
    """Fail with the reason given."""
    raise ToolError(reason)


@server.tool()
def pixel() -> Image:
    """Return a one-byte PNG-typed image."""
    return Image(data=b"\x89", format="png")


@server.tool()
def pid() -> int:
    """Return the server's process id."""
    return os.getpid()


@server.tool()
async def slow(seconds: float) -> str:
    """Answer after the given number of seconds."""
    await anyio.sleep(seconds)
    return "late"


@server.tool()
def refuse(code: int) -> str:
    """Answer the call with a JSON-RPC error of the given code."""
    raise MCPError(code=code, message="refused by the server")


@server.tool()
def die() -> str:
    """End the server's process at once, mid-call."""
    os._exit(3)


def _serve_http() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        _serve_http()
    else:
        server.run()
