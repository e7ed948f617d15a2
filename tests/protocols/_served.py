"""Serve an ASGI app with a real uvicorn on a loopback port, and stop it after."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import uvicorn

TIMEOUT = 10.0
CHILD_TIMEOUT = 30.0  # a child's start or exit on a busy machine; under a second on a quiet one


@contextlib.contextmanager
def served(app: Any, lifespan: str = "off") -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 until the block ends; yield its base URL.

    ``lifespan="on"`` for an app that starts its own tasks there (the MCP server's session
    manager, the A2A app's).
    """
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
        thread.join(TIMEOUT)
        sock.close()
        assert not thread.is_alive(), "the server did not stop"


def free_port() -> int:
    """Return a loopback port that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_serving(child: subprocess.Popen[bytes], url: str) -> None:
    """Wait (bounded) until ``url`` answers 200; fail if the child exits first."""
    pause = threading.Event()  # never set: a bounded pause between looks
    deadline = time.monotonic() + CHILD_TIMEOUT
    while True:
        assert child.poll() is None, child.communicate()
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"not serving after {CHILD_TIMEOUT} s"
        pause.wait(0.05)
