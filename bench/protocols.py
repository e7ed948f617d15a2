"""Benchmark the CPU the protocol apps add to a run over ``astream`` (not a test).

    python bench/protocols.py            # 15 rounds of 20 runs a variant (~1 min, 2 vCPUs)
    python bench/protocols.py --quick    # 3 rounds of 5: a smoke run of seconds
    python bench/protocols.py ag_ui      # the floor and the variants named so only

One runtime, one agent with a scripted model (no network): a run is two model calls, the
first calling a tool ``add`` and the second answering with its result. The floor is
``session.astream(text)`` consumed in this process; each protocol variant runs the same
run through its app, called as an ASGI app in this process (no server, no socket: the
request's body is handed to the app and its answer collected, so what is measured is the
protocol layer and not HTTP): ``ag_ui_app`` (``POST`` a ``RunAgentInput``, the SSE events),
``a2a_app`` (JSON-RPC ``SendMessage`` and ``SendStreamingMessage``), ``openai_app``
(``POST /v1/chat/completions``, blocking and streamed with usage) and ``mcp_server``
(``tools/call`` over its streamable HTTP app, in a session initialised once). Every run is
a new session (a new thread, context or conversation), as a client's first message is.

Measured: the process's CPU time (every thread: the runtime's included) and the wall time
per run. The variants are measured in turn in every round (the order rotated each round),
each batch after a ``gc.collect()``; a variant's ratio is the median over the rounds of its
CPU per run over the floor's in the same round (beside it, "best": the ratio of their least
CPU per run, which load elsewhere cannot inflate). Target: every ratio <= 1.10; the script
prints FAIL and exits 1 when one is over.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec

_HERE = Path(__file__).resolve().parent
# Run as a script, this file's folder comes first on the path, and bench/mcp.py would be
# imported as the SDK the MCP server needs.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from bench._machine import OtherLoad, cpu_model, load_note  # noqa: E402
from praxo_actors.agent import Tool, new_agent_options  # noqa: E402
from praxo_actors.models import Request, Response, ToolCall, message_assistant  # noqa: E402
from praxo_actors.protocols import a2a_app, ag_ui_app, mcp_server, openai_app  # noqa: E402
from praxo_actors.runtime import Runtime  # noqa: E402

TARGET = 1.10  # a protocol's CPU per run over the floor's
AGENT = "bench"
ANSWER = "The sum is 5."
USAGE = {"input_tokens": 12, "output_tokens": 5}
HOST = (b"host", b"127.0.0.1:8000")
SERVER = ("127.0.0.1", 8000)

Run = Callable[[int], Awaitable[None]]


def chat(request: Request) -> Response:
    """Call ``add`` on the first step; answer with its result on the next."""
    last = request.messages[-1]
    if last.role == "tool":
        return Response(message_assistant(f"The sum is {last.content}."), usage=USAGE)
    return Response(message_assistant("", [ToolCall("add", {"a": 2, "b": 3})]), usage=USAGE)


def options() -> Any:
    add = Tool("add", "Add two numbers.", {"type": "object"}, lambda a: a["a"] + a["b"])
    return new_agent_options(chat, tools=[add])


class Answer:
    """What an ASGI app answered: its status, headers and whole body."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[bytes, bytes] = {}
        self.body = bytearray()


async def call(
    app: Any, path: str, doc: Any, headers: tuple[tuple[bytes, bytes], ...] = ()
) -> Answer:
    """``POST`` ``doc`` as JSON to ``app`` at ``path`` (one ASGI call); return its answer."""
    body = msgspec.json.encode(doc)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [
            HOST,
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *headers,
        ],
        "client": ("127.0.0.1", 50000),
        "server": SERVER,
        "state": {},
    }
    answer = Answer()
    done = asyncio.Event()
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()  # the client stays until the answer is whole
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.headers = dict(message.get("headers", ()))
        elif message["type"] == "http.response.body":
            answer.body += message.get("body", b"")
            if not message.get("more_body", False):
                done.set()

    await app(scope, receive, send)
    done.set()
    return answer


def expect(answer: Answer, what: str) -> None:
    """Fail the benchmark when a variant did not answer the run's output."""
    if answer.status != 200 or ANSWER.encode() not in answer.body:
        raise SystemExit(f"{what}: status {answer.status}, body {bytes(answer.body[:300])!r}")


def floor(runtime: Runtime) -> Run:
    async def run(i: int) -> None:
        stream = runtime.session(f"floor-{i}", AGENT).astream("Add 2 and 3.")
        async for _event in stream:
            pass
        result = await stream.result()
        if result.output != ANSWER:
            raise SystemExit(f"floor: {result.output!r}")

    return run


def ag_ui(runtime: Runtime) -> Run:
    app = ag_ui_app(runtime, agent=AGENT)

    async def run(i: int) -> None:
        doc = {
            "threadId": f"ag-ui-{i}",
            "runId": f"r{i}",
            "messages": [{"id": "m1", "role": "user", "content": "Add 2 and 3."}],
            "tools": [],
            "context": [],
            "state": {},
            "forwardedProps": {},
        }
        answer = await call(app, "/", doc, ((b"accept", b"text/event-stream"),))
        if b"RUN_FINISHED" not in answer.body:
            raise SystemExit(f"ag_ui: {bytes(answer.body[-300:])!r}")
        expect_text = b'"delta":"' + ANSWER.encode() + b'"'
        if expect_text not in answer.body:
            raise SystemExit(f"ag_ui: no answer in {bytes(answer.body[-600:])!r}")

    return run


def a2a(runtime: Runtime, streaming: bool) -> Run:
    app = a2a_app(runtime, agent=AGENT)
    method = "SendStreamingMessage" if streaming else "SendMessage"
    version = ((b"a2a-version", b"1.0"),)

    async def run(i: int) -> None:
        message = {
            "messageId": f"m{i}",
            "contextId": f"a2a-{i}",
            "role": "ROLE_USER",
            "parts": [{"text": "Add 2 and 3."}],
        }
        doc = {
            "jsonrpc": "2.0",
            "id": str(i),
            "method": method,
            "params": {"message": message, "configuration": {}},
        }
        answer = await call(app, "/", doc, version)
        expect(answer, method)
        if b"TASK_STATE_COMPLETED" not in answer.body:
            raise SystemExit(f"{method}: {bytes(answer.body[-300:])!r}")

    return run


def openai(runtime: Runtime, streaming: bool) -> Run:
    app = openai_app(runtime)
    extra = {"stream": True, "stream_options": {"include_usage": True}} if streaming else {}

    async def run(_i: int) -> None:
        doc = {
            "model": AGENT,
            "messages": [{"role": "user", "content": "Add 2 and 3."}],
            **extra,
        }
        answer = await call(app, "/v1/chat/completions", doc)
        expect(answer, "openai")

    return run


class MCP:
    """The MCP server's streamable HTTP app, with one client session initialised."""

    def __init__(self, runtime: Runtime) -> None:
        self.server = mcp_server(runtime, [AGENT])
        self.app = self.server.streamable_http_app()
        self.headers: tuple[tuple[bytes, bytes], ...] = ()

    async def initialise(self) -> None:
        accept = (b"accept", b"application/json, text/event-stream")
        hello = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
        answer = await call(self.app, "/mcp", hello, (accept,))
        if answer.status != 200:
            raise SystemExit(f"mcp initialize: {answer.status} {bytes(answer.body)!r}")
        session = answer.headers[b"mcp-session-id"]
        body = bytes(answer.body)
        if body.startswith(b"{"):  # a JSON answer
            version = json.loads(body)
        else:  # server-sent events
            version = json.loads(body.split(b"data: ", 1)[1].split(b"\r\n")[0])
        self.headers = (
            accept,
            (b"mcp-session-id", session),
            (b"mcp-protocol-version", version["result"]["protocolVersion"].encode()),
        )
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        answer = await call(self.app, "/mcp", note, self.headers)
        if answer.status != 202:
            raise SystemExit(f"mcp initialized: {answer.status} {bytes(answer.body)!r}")

    def run(self) -> Run:
        async def run(i: int) -> None:
            doc = {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": AGENT, "arguments": {"input": "Add 2 and 3."}},
            }
            answer = await call(self.app, "/mcp", doc, self.headers)
            expect(answer, "mcp")

        return run


async def batch(run: Run, counter: itertools.count[int], runs: int) -> tuple[float, float]:
    """Return the CPU and wall seconds per run of ``runs`` runs of ``run``."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(runs):
        await run(next(counter))
    return (time.process_time() - cpu) / runs, (time.perf_counter() - wall) / runs


async def measure(runtime: Runtime, rounds: int, runs: int, only: list[str]) -> int:
    """Measure the variants (those named in ``only``, if any, and the floor), print the
    table, and return the exit status."""
    mcp = MCP(runtime)
    async with mcp.server.session_manager.run():
        await mcp.initialise()
        variants: dict[str, Run] = {
            "astream (floor)": floor(runtime),
            "ag_ui_app": ag_ui(runtime),
            "a2a_app send": a2a(runtime, streaming=False),
            "a2a_app stream": a2a(runtime, streaming=True),
            "openai_app blocking": openai(runtime, streaming=False),
            "openai_app streaming": openai(runtime, streaming=True),
            "mcp_server (HTTP)": mcp.run(),
        }
        base = "astream (floor)"
        if only:
            variants = {k: v for k, v in variants.items() if k == base or k.startswith(tuple(only))}
        counter = itertools.count()
        for run in variants.values():  # warm up: imports, first sessions, caches
            for _ in range(3):
                await run(next(counter))
        names = list(variants)
        cpu: dict[str, list[float]] = {name: [] for name in names}
        wall: dict[str, list[float]] = {name: [] for name in names}
        others = OtherLoad()
        for r in range(rounds):
            shift = r % len(names)
            for name in names[shift:] + names[:shift]:
                c, w = await batch(variants[name], counter, runs)
                cpu[name].append(c)
                wall[name].append(w)
    print(
        f"{rounds} rounds of {runs} runs a variant; per run, the median of the rounds; CPU ratio:"
        " the median of the rounds' ratios (the verdict); best: of the least CPU per run"
    )
    print(f"  {'variant':<22}{'CPU ms/run':>11}{'wall ms/run':>12}{'CPU ratio':>11}{'best':>8}")
    failed = []
    for name in names:
        ratios = [c / f for c, f in zip(cpu[name], cpu[base], strict=True)]
        ratio = statistics.median(ratios)
        verdict = ""
        if name != base:
            verdict = "  ok" if ratio <= TARGET else f"  FAIL (> {TARGET:.2f})"
            if ratio > TARGET:
                failed.append(name)
        best = min(cpu[name]) / min(cpu[base])  # what interference cannot inflate
        print(
            f"  {name:<22}{statistics.median(cpu[name]) * 1e3:11.2f}"
            f"{statistics.median(wall[name]) * 1e3:12.2f}{ratio:10.3f}x{best:7.3f}x{verdict}"
        )
    print(others.note())
    if failed:
        print(f"FAIL: over {TARGET:.2f}x the floor's CPU: {', '.join(failed)}")
        return 1
    print(f"all protocols within {TARGET:.2f}x the floor's CPU per run")
    return 0


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark; exit 1 when a protocol is over its target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of seconds")
    parser.add_argument("--rounds", type=int, help="rounds (default: 15, quick 3)")
    parser.add_argument("--runs", type=int, help="runs a variant a round (default: 20, quick 5)")
    parser.add_argument(
        "only", nargs="*", help="measure only the variants starting with these (e.g. ag_ui)"
    )
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 15)
    runs = args.runs or (5 if args.quick else 20)
    print(
        f"Python {platform.python_version()}, {cpu_model()}, {os.cpu_count()} CPUs; {load_note()}"
    )
    runtime = Runtime.start(idle_timeout=None)
    try:
        runtime.register_agent(AGENT, options)
        status = asyncio.run(measure(runtime, rounds, runs, args.only))
    finally:
        runtime.stop()
    sys.exit(status)


if __name__ == "__main__":
    main()
