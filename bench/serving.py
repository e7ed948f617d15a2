"""Benchmark SIGTERM with open event streams: ``serving.serve`` against plain uvicorn (not a test).

    python bench/serving.py            # 10 shutdowns each
    python bench/serving.py --quick    # 3 each

A child process (tests/observer/_serving_child.py) serves an app with two event streams — the
observer's ``/api/events``, mounted, and a handler's own ``runtime.events.stream`` — on
127.0.0.1; this process holds both open with httpx, sends SIGTERM, and times the child's exit
from the signal. Plain uvicorn is ``uvicorn.run`` with ``timeout_graceful_shutdown=5``, the
grace ``serve`` defaults to. Measured: the time to exit (median, max), the exit status, the
bytes the child wrote to stderr, and the streams cut short (an incomplete chunked body).
Target: ``serve`` exits within 1 s, status 0, stderr empty, no stream cut.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
CHILD = ROOT / "tests" / "observer" / "_serving_child.py"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def once(plain: bool) -> tuple[float, int, int, int]:
    """Return the seconds from SIGTERM to exit, the exit status, the bytes on stderr and the
    streams cut short (of two) of one shutdown."""
    port = _port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, str(CHILD), str(port), *(["plain"] if plain else [])]
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    base = f"http://127.0.0.1:{port}"
    pause = threading.Event()
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{base}/observer/api/state", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            child.kill()
            raise SystemExit("the child did not start")
        pause.wait(0.05)
    with (
        httpx.Client(base_url=base, timeout=30) as client,
        client.stream("GET", "/events") as own,
        client.stream("GET", "/observer/api/events") as observed,
    ):
        lines = [own.iter_lines(), observed.iter_lines()]
        for stream in lines:
            next(stream)  # open
        sent = time.monotonic()
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=60)
        took = time.monotonic() - sent
        cut = 0
        for stream in lines:
            try:
                for _line in stream:
                    pass
            except httpx.RemoteProtocolError:  # the body was cut short
                cut += 1
    return took, child.returncode, len(err), cut


def main() -> None:
    """Run the shutdowns and print one line per server."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    rounds = 3 if parser.parse_args().quick else 10
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {rounds} shutdowns each")
    for name, plain in (("serve", False), ("uvicorn.run", True)):
        results = [once(plain) for _ in range(rounds)]
        times = [t for t, _, _, _ in results]
        print(
            f"{name:12} exit after SIGTERM: median {statistics.median(times):.2f} s, "
            f"max {max(times):.2f} s; status {sorted({r for _, r, _, _ in results})}; "
            f"stderr {max(e for _, _, e, _ in results)} bytes at most; "
            f"streams cut {sum(c for *_, c in results)} of {2 * rounds}"
        )


if __name__ == "__main__":
    main()
