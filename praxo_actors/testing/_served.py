"""Serve an ASGI app with a real uvicorn on a loopback port for a test, or wait for a child
process to serve one (the test suites' protocol, cluster and observer tests share these)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

__all__ = ["free_port", "served", "wait_until_serving"]


@contextlib.contextmanager
def served(
    app: Any, lifespan: Literal["auto", "on", "off"] = "off", stop_timeout: float = 10.0
) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 until the block ends; yield its base URL.

    ``lifespan="on"`` for an app that starts its own tasks there (the MCP server's session
    manager, the A2A app's). The server must stop within ``stop_timeout`` seconds.
    """
    import uvicorn

    # Bound before the server starts: requests made meanwhile wait in the listen backlog.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="warning", lifespan=lifespan, timeout_graceful_shutdown=5
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="uvicorn")
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(stop_timeout)
        sock.close()
        assert not thread.is_alive(), "the server did not stop"


def free_port() -> int:
    """Return a loopback port that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_serving(child: subprocess.Popen[bytes], url: str, timeout: float = 30.0) -> None:
    """Wait (bounded by ``timeout``) until ``url`` answers 200; fail if the child exits first."""
    import httpx

    pause = threading.Event()  # never set: a bounded pause between looks
    deadline = time.monotonic() + timeout
    while True:
        assert child.poll() is None, child.communicate()
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"not serving after {timeout} s"
        pause.wait(0.05)
