"""``serve``: SIGTERM with open event streams ends them, and the service exits 0, silently.

Each test runs the service in a child process (signals need a main thread of their own) and
holds its streams open with a real HTTP client.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from praxo_actors import PraxoError
from praxo_actors.serving import serve
from praxo_actors.testing._served import free_port, wait_until_serving

TIMEOUT = 30.0  # a child's start or exit on a busy machine; well under a second on a quiet one
CHILD = Path(__file__).with_name("_serving_child.py")
ROOT = Path(__file__).parents[2]


@pytest.fixture
def child() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Start the service on a free port; make sure it has ended after the test."""
    port = free_port()
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    process = subprocess.Popen(
        [sys.executable, str(CHILD), str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(process, f"{base}/observer/api/state")
        yield process, base
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=TIMEOUT)


def test_sigterm_ends_open_streams_and_exits_cleanly(
    child: tuple[subprocess.Popen[bytes], str],
) -> None:
    """Both streams end with their own last frame; exit status 0; nothing on stderr."""
    process, base = child
    with (
        httpx.Client(base_url=base, timeout=TIMEOUT) as client,
        client.stream("GET", "/events") as own,
        client.stream("GET", "/observer/api/events") as observed,
    ):
        own_lines = own.iter_lines()
        observed_lines = observed.iter_lines()
        assert next(own_lines) == ": open"
        assert next(observed_lines) == ": praxo-actors observer"
        process.send_signal(signal.SIGTERM)
        # Read to the end: a response cut short raises (an incomplete chunked body).
        own_rest = [line for line in own_lines if line]
        observed_rest = [line for line in observed_lines if line]
    out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, err.decode()
    assert err == b""
    assert out == b"stopped\n"
    assert own_rest == [": end"]
    assert observed_rest == ["event: end", "data: {}"]


def test_sigterm_without_streams_exits_cleanly(
    child: tuple[subprocess.Popen[bytes], str],
) -> None:
    """No stream open: the same clean exit."""
    process, _base = child
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=TIMEOUT)
    assert (process.returncode, err, out) == (0, b"", b"stopped\n")


@pytest.mark.parametrize("port", [-1, 65536, True, "80"])
def test_serve_refuses_a_bad_port(port: object) -> None:
    """A bad port is refused before anything starts."""
    with pytest.raises(PraxoError) as info:
        serve(object(), port=port)  # type: ignore[arg-type]
    assert info.value.code == "RUNTIME_INVALID_INPUT"


def test_serve_refuses_a_runtime_that_is_not_one() -> None:
    """``runtime`` must be a Runtime."""
    with pytest.raises(PraxoError) as info:
        serve(object(), runtime=object())  # type: ignore[arg-type]
    assert info.value.code == "RUNTIME_INVALID_INPUT"


def test_serve_on_a_port_in_use_is_serve_failed() -> None:
    """``serve`` on a port another socket listens on raises PraxoError SERVE_FAILED, not
    SystemExit."""

    async def app(scope: object, receive: object, send: object) -> None:  # never called
        raise AssertionError("served")

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(PraxoError) as info:
            serve(app, port=port, log_level="critical")
    assert info.value.code == "SERVE_FAILED"
    assert str(port) in info.value.message


def test_an_observer_server_on_a_port_in_use_is_serve_failed() -> None:
    """``ObserverServer`` on a port another socket listens on raises SERVE_FAILED."""
    from praxo_actors.observer import ObserverServer
    from praxo_actors.runtime import Runtime

    runtime = Runtime.start(idle_timeout=None)
    try:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            with pytest.raises(PraxoError) as info:
                ObserverServer(runtime, port=taken.getsockname()[1], timeout=TIMEOUT)
        assert info.value.code == "SERVE_FAILED"
    finally:
        runtime.stop()
