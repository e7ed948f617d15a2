"""Benchmark an MCP tool call through the agent loop against the SDK's own client (not a test).

    python bench/mcp.py            # ~1 min on 2 vCPUs
    python bench/mcp.py --quick    # a smoke run of seconds

Starts one MCP server (written with the SDK's ``MCPServer``) over stdio and one over streamable
HTTP on 127.0.0.1, and for each prints the time per call of its ``add`` tool, interleaved batch by
batch (best of N, so a burst of load on a shared machine slows one batch, not one variant):

1. *SDK client* (the floor): ``await client.call_tool("add", ...)`` on a ``mcp.Client`` of its own;
2. *MCPTools.call*: the same call through ``MCPTools`` (its owner task, timeout and result mapping);
3. *through arun_agent* [target: <= 1.5x the floor]: a run whose model asks for one ``add`` per
   step, so each step is a model call, the MCP call and the loop's bookkeeping.

Over stdio the floor's client runs a second process of the same server script; over HTTP both
clients are sessions of the same server process.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
# Run as a script, this file's folder comes first on the path, and its name is the SDK's.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from mcp import Client, StdioServerParameters  # noqa: E402

from bench._machine import cpu_model, load_note  # noqa: E402
from praxo_actors.agent import arun_agent, new_agent_options  # noqa: E402
from praxo_actors.mcp import MCPTools  # noqa: E402
from praxo_actors.models import Request, Response, ToolCall, message_assistant, session  # noqa: E402

SERVER = '''
import socket, sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench", log_level="WARNING")

@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b

if sys.argv[1:] == ["http"]:
    import uvicorn
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])
else:
    server.run()
'''


def scripted(steps: int) -> Callable[[Request], Response]:
    """Return a model that calls ``add`` on each of ``steps`` steps, then answers."""
    calls = [
        Response(message_assistant("", [ToolCall("add", {"a": i, "b": 1}, id=f"c{i}")]))
        for i in range(steps)
    ]
    done = Response(message_assistant("done"))

    def model(request: Request) -> Response:
        made = sum(1 for m in request.messages if m.role == "tool")
        return calls[made] if made < steps else done

    return model


async def per_call(fn: Callable[[], Awaitable[Any]], calls: int) -> float:
    """Return the seconds per call of ``fn`` making ``calls`` calls."""
    start = time.perf_counter()
    await fn()
    return (time.perf_counter() - start) / calls


async def measure(direct: Client, tools: MCPTools, calls: int, batches: int) -> dict[str, float]:
    """Return the best seconds per call of each variant over interleaved batches."""
    options = new_agent_options(scripted(calls), tools=tools.tools, max_steps=calls + 1)

    async def sdk() -> None:
        for i in range(calls):
            await direct.call_tool("add", {"a": i, "b": 1})

    async def ours() -> None:
        for i in range(calls):
            await tools.call("add", {"a": i, "b": 1})

    async def loop() -> None:
        result = await arun_agent(options, session("bench"), "go")
        assert result.tool_calls == calls, result

    variants = {"SDK client": sdk, "MCPTools.call": ours, "through arun_agent": loop}
    best = dict.fromkeys(variants, float("inf"))
    for fn in variants.values():  # warm up: first calls pay for imports and caches
        await fn()
    for _ in range(batches):
        for name, fn in variants.items():
            best[name] = min(best[name], await per_call(fn, calls))
    return best


def start_http(script: Path) -> tuple[subprocess.Popen[str], str]:
    """Start the HTTP server; return its process and URL once it listens."""
    process = subprocess.Popen(
        [sys.executable, str(script), "http"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(60):
            process.kill()
            raise SystemExit("the HTTP server did not start")
    return process, f"http://127.0.0.1:{int(process.stdout.readline())}/mcp"


def report(transport: str, best: dict[str, float]) -> None:
    """Print one transport's table."""
    floor = best["SDK client"]
    print(f"\n{transport}:\n")
    print("| | per call | vs floor |\n|---|---|---|")
    for name, seconds in best.items():
        note = " (target <= 1.5x)" if name == "through arun_agent" else ""
        print(f"| {name} | {seconds * 1e6:.0f} µs | {seconds / floor:.2f}x{note} |")


async def main(quick: bool) -> None:
    calls, batches = (5, 3) if quick else (50, 15)
    print(f"bench/mcp.py: Python {platform.python_version()}, {platform.machine()}, {cpu_model()}")
    print(f"{batches} interleaved batches of {calls} calls; best batch per variant; {load_note()}")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_server.py"
        script.write_text(SERVER, encoding="utf-8")
        params = StdioServerParameters(command=sys.executable, args=[str(script)])
        async with (
            Client(params) as direct,
            MCPTools.stdio(sys.executable, [str(script)]) as tools,
        ):
            report("stdio", await measure(direct, tools, calls, batches))
        process, url = start_http(script)
        try:
            async with Client(url) as direct, MCPTools.http(url) as tools:
                report("streamable HTTP", await measure(direct, tools, calls, batches))
        finally:
            process.terminate()
            process.wait(10)
            assert process.stdout is not None
            process.stdout.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of seconds")
    asyncio.run(main(parser.parse_args().quick))
