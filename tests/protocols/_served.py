"""Serve an ASGI app with a real uvicorn on a loopback port, and stop it after."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn

TIMEOUT = 10.0


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
