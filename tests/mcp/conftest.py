"""Fixtures of the MCP tests: the test server over stdio, and over streamable HTTP on loopback."""

from __future__ import annotations

import importlib.util
import selectors
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from praxo_actors.mcp import MCPTools

if importlib.util.find_spec("mcp") is None:  # the mcp extra is not installed
    collect_ignore_glob = ["test_*.py"]

SERVER = Path(__file__).with_name("_server.py")
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
TIMEOUT = 30.0  # each call's bound in the tests; a healthy call takes milliseconds


@dataclass
class HTTPServer:
    """The test server in a process of its own, serving streamable HTTP on 127.0.0.1."""

    process: subprocess.Popen[str]
    url: str

    def stop(self) -> None:
        """End the process (SIGTERM, then SIGKILL), and wait for it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(STOP_TIMEOUT)
        assert self.process.stdout is not None
        self.process.stdout.close()


def start_http_server() -> HTTPServer:
    """Start the server and return once it listens (it prints its port then)."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "http"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        ready = selector.select(START_TIMEOUT)
    line = process.stdout.readline() if ready else ""
    if not line.strip().isdigit():
        process.kill()
        process.wait(STOP_TIMEOUT)
        process.stdout.close()
        raise RuntimeError(f"the MCP test server did not start (said {line!r})")
    return HTTPServer(process, f"http://127.0.0.1:{int(line)}/mcp")


@pytest.fixture
def http_server() -> Iterator[HTTPServer]:
    """Serve the test server over streamable HTTP; stop it after the test."""
    running = start_http_server()
    try:
        yield running
    finally:
        running.stop()


def stdio_tools(timeout: float = TIMEOUT) -> MCPTools:
    """Return an ``MCPTools`` that runs the test server over stdio."""
    from praxo_actors.mcp import MCPTools

    return MCPTools.stdio(sys.executable, [str(SERVER)], timeout=timeout)


@pytest.fixture(params=["stdio", "http"])
def open_tools(
    request: pytest.FixtureRequest, no_thread_leaks: None
) -> Iterator[Callable[..., MCPTools]]:
    """Return a factory of ``MCPTools`` for the test server, over each transport in turn."""
    if request.param == "stdio":
        yield stdio_tools
        return
    from praxo_actors.mcp import MCPTools

    running = start_http_server()
    try:
        yield lambda timeout=TIMEOUT: MCPTools.http(running.url, timeout=timeout)
    finally:
        running.stop()
