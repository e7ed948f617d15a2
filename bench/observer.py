"""Benchmark the observer under event-stream clients that never read (not a test).

    python bench/observer.py            # 1,000 clients, 300 runs (~1 min, 2 vCPUs)
    python bench/observer.py --quick    # 200 clients, 100 runs

A child process serves a runtime and its observer (``ObserverServer`` on 127.0.0.1, a free port)
with a demo-like agent (an async model that calls a calculator tool, 5 ms per model call: eight
events a run). Its floor is its own size before the clients: its RSS after it started and ran
the same runs once with no client connected. This process then opens one client that reads
its stream (``run.completed`` events) and the slow clients — raw sockets with a 1 KiB receive
buffer that send ``GET /api/events?pattern=*`` and never read — waits until the observer
counts them all, and has the child run the runs again while it asks
``GET /api/state`` over and over, timing each answer (30 s client timeout). Measured: the
answers' latency (p50, max), the child's peak RSS over the floor (``/proc/<pid>/status``,
sampled at each answer), the observer's own counters (clients dropped, longest queue), and
how many of the runs' ``run.completed`` events the reading client got.
Targets: every ``/api/state`` within 1 s, the peak within 200 MB of the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from _machine import OtherLoad, cpu_model, load_note

READY = "OBSERVER-READY "
DONE = "OBSERVER-DONE"
LATENCY_TARGET = 1.0  # seconds, every /api/state answer
RSS_TARGET = 200 * 2**20  # bytes over the floor
LIMIT = 180.0  # seconds the measured runs may take before the benchmark gives up on them
SETTLE = 5.0  # seconds of answers after the runs, while their events reach the clients


def child() -> None:
    """Serve a runtime and its observer; run ``run N`` commands from stdin until ``quit``."""
    from praxo_actors.agent import Tool, new_agent_options
    from praxo_actors.models import Request, Response, ToolCall, message_assistant
    from praxo_actors.observer import ObserverServer
    from praxo_actors.runtime import Runtime

    async def model(request: Request) -> Response:
        await asyncio.sleep(0.005)
        results = [m for m in request.messages[-1:] if m.role == "tool"]
        if not results:
            return Response(message_assistant("", [ToolCall("calc", {"a": 6, "b": 7}, id="c")]))
        return Response(message_assistant(f"The product is {results[0].content}."))

    calc = Tool("calc", "Multiply.", {"type": "object"}, lambda a: a["a"] * a["b"])
    with Runtime.start(idle_timeout=None) as runtime:
        runtime.register_agent("demo", lambda: new_agent_options(model, tools=[calc]))
        server = ObserverServer(runtime)
        try:
            print(READY + str(server.port), flush=True)
            for line in sys.stdin:
                command = line.split()
                if command[:1] == ["quit"]:
                    break
                n = int(command[1])
                futures = [runtime.session(f"s{i}", agent="demo").run("go") for i in range(n)]
                for future in futures:
                    future.get(timeout=120)
                print(DONE, flush=True)
        finally:
            server.stop()


class Reader:
    """A client that reads the whole stream as it comes, counting ``run.completed`` events."""

    def __init__(self, port: int) -> None:
        import threading

        self.completed = 0
        self.ended = ""
        self._opened = threading.Event()
        self._url = f"http://127.0.0.1:{port}/api/events?pattern=run.completed"
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        if not self._opened.wait(30):
            raise RuntimeError("the reader's stream did not open within 30 s")

    def _read(self) -> None:
        try:
            with httpx.stream("GET", self._url, timeout=60.0) as reply:
                for line in reply.iter_lines():
                    self._opened.set()
                    if line.startswith("data: "):
                        self.completed += 1
                    elif line.startswith("event: "):
                        self.ended = line.removeprefix("event: ")
            self.ended = self.ended or "closed"
        except httpx.HTTPError as exc:
            self.ended = f"failed: {exc!r}"
        finally:
            self._opened.set()

    def join(self) -> None:
        self._thread.join(60)


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) process ``pid`` has used, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss(pid: int) -> int:
    """Return the resident set size of process ``pid`` in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def never_reading(port: int) -> socket.socket:
    """Connect with a tiny receive buffer, ask for the event stream, and never read."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.connect(("127.0.0.1", port))
    # The Host the server was bound on: any other is refused (DNS rebinding).
    head = f"GET /api/events?pattern=* HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    sock.sendall(head.encode())
    return sock


class Server:
    """The child process, driven over its stdin and stdout."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.port = int(self._expect(READY).removeprefix(READY))

    def _expect(self, marker: str) -> str:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(marker):
                return line.strip()
        raise RuntimeError(f"the server process ended before {marker.strip()!r}")

    def run(self, n: int) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"run {n}\n")
        self.proc.stdin.flush()

    def wait_done(self) -> None:
        self._expect(DONE)

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def measure(clients: int, runs: int) -> dict[str, Any]:
    """Open ``clients`` slow clients and run ``runs`` runs; return what was measured."""
    server = Server()
    slow: list[socket.socket] = []
    latencies: list[float] = []
    counters: list[dict[str, Any]] = []
    try:
        http = httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=30.0)
        server.run(runs)  # the warm-up: the same runs, no client connected
        server.wait_done()
        http.get("/api/state").raise_for_status()
        floor = rss(server.proc.pid)
        peak = floor

        def ask() -> dict[str, Any]:
            nonlocal peak
            t = time.perf_counter()
            try:
                reply = http.get("/api/state")
                reply.raise_for_status()
            except httpx.TimeoutException:
                latencies.append(float("inf"))  # no answer within the client's 30 s
                return {}
            finally:
                peak = max(peak, rss(server.proc.pid))
            latencies.append(time.perf_counter() - t)
            state: dict[str, Any] = reply.json()
            counters.append(state.get("observer", {}))
            return state

        reader = Reader(server.port)
        slow = [never_reading(server.port) for _ in range(clients)]
        deadline = time.monotonic() + 60
        while ask().get("observer", {}).get("clients", clients + 1) < clients + 1:
            if time.monotonic() > deadline:
                raise RuntimeError("the clients did not all connect within 60 s")
        latencies.clear()
        cpu = cpu_seconds(server.proc.pid)
        started = time.perf_counter()
        server.run(runs)
        assert server.proc.stdout is not None
        done = _reader(server)
        while not done() and time.perf_counter() - started < LIMIT:
            ask()
        elapsed = time.perf_counter() - started
        # The runs have ended; their events may still be on their way to the clients.
        settled = time.perf_counter() + SETTLE
        while time.perf_counter() < settled:
            ask()
        cpu = cpu_seconds(server.proc.pid) - cpu
        http.close()
        last = counters[-1] if counters else {}
        return {
            "floor": floor,
            "peak": peak,
            "latencies": latencies,
            "elapsed": elapsed,
            "dropped": last.get("clients_dropped"),
            "left": last.get("clients"),
            "queued_max": max((c.get("queued_max", 0) for c in counters), default=None),
            "queued": max((c.get("queued", 0) for c in counters), default=None),
            "buffer": last.get("client_buffer"),
            "reader": reader.completed,
            "cpu": cpu,
        }
    finally:
        for sock in slow:
            sock.close()
        server.stop()
        if "reader" in locals():
            reader.join()


def _reader(server: Server) -> Any:
    """Return a function that says whether the child has printed DONE (without blocking)."""
    import threading

    finished = threading.Event()

    def wait() -> None:
        server.wait_done()
        finished.set()

    threading.Thread(target=wait, daemon=True).start()
    return finished.is_set


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 clients, 100 runs")
    parser.add_argument("--clients", type=int, help="slow clients (default 1,000)")
    parser.add_argument("--runs", type=int, help="runs (default 300)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child()
        return 0
    clients, runs = (200, 100) if args.quick else (1000, 300)
    clients = clients if args.clients is None else args.clients
    runs = runs if args.runs is None else args.runs
    print(f"praxo-actors observer benchmark: {clients:,} clients that never read, {runs} runs")
    print(
        f"  Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs ({cpu_model()})"
    )
    print(f"  {load_note()}")
    others = OtherLoad()
    r = measure(clients, runs)
    lat = sorted(r["latencies"])
    if not lat:
        print("  no /api/state answer at all")
        return 1
    worst = lat[-1] if lat else float("inf")
    growth = r["peak"] - r["floor"]
    mib = 2**20
    print(
        f"  /api/state answers: {len(lat)}, during the runs ({r['elapsed']:.1f} s) "
        f"and {SETTLE:.0f} s after"
    )
    print(f"  /api/state latency p50 {statistics.median(lat) * 1e3:,.1f} ms, ", end="")
    print(f"max {worst * 1e3:,.1f} ms  [target <= {LATENCY_TARGET * 1e3:,.0f} ms]", end="")
    print("  met" if worst <= LATENCY_TARGET else "  MISSED")
    print(f"  RSS floor {r['floor'] / mib:,.1f} MiB, peak {r['peak'] / mib:,.1f} MiB, ", end="")
    print(f"growth {growth / mib:,.1f} MiB  [target <= {RSS_TARGET / mib:,.0f} MiB]", end="")
    print("  met" if growth <= RSS_TARGET else "  MISSED")
    print(
        f"  observer: {r['dropped']} clients dropped, {r['left']} still connected, "
        f"longest queue seen {r['queued_max']} (bound {r['buffer']}), "
        f"most frames queued at once {r['queued']}"
    )
    print(f"  the server process used {r['cpu']:.1f} CPU-s over the runs and after")
    print(f"  a client reading the stream got {r['reader']} of {runs} run.completed events")
    print(f"  {others.note()}")
    slowest = ", ".join(f"{x * 1e3:,.0f}" for x in lat[-5:])
    print(f"  the five slowest answers (ms): {slowest}")
    print(json.dumps({k: v for k, v in r.items() if k != "latencies"}))
    return 0 if worst <= LATENCY_TARGET and growth <= RSS_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
