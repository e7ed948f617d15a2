"""Malformed requests to the observer, sent over a raw socket (an HTTP client refuses to send
them): each is a 4xx with a code, never a 500."""

from __future__ import annotations

import json
import socket

import pytest
from _observed import TIMEOUT, Observed
from test_observer_views import token_of

PATHS = ["/", "/api/state", "/api/runs", "/api/approvals", "/api/sessions/s", "/api/series"]


def raw(observed: Observed, request: bytes) -> tuple[int, bytes]:
    """Send ``request`` as is on a new connection; return the status and the body."""
    with socket.create_connection(
        (observed.server.host, observed.server.port), timeout=TIMEOUT
    ) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def error_code(body: bytes) -> str:
    """Return the code of an observer's error body."""
    code: str = json.loads(body)["error"]["code"]
    return code


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("port", [b"\xb2", b"\xd9\xa3", b"99999999999999999999"])
def test_a_host_with_a_port_that_is_not_ascii_digits_is_refused(
    observed: Observed, path: str, port: bytes
) -> None:
    """A ``Host`` whose port is a superscript, another script's digit or too long is a 421
    OBSERVER_HOST_REFUSED, not a 500."""
    request = b"GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n"
    status, body = raw(observed, request % (path.encode(), port))
    assert (status, error_code(body)) == (421, "OBSERVER_HOST_REFUSED")


@pytest.mark.parametrize("path", ["/api/approvals/s", "/api/stop/s", "/api/passivate/s"])
def test_a_body_nested_too_deep_is_a_400(observed: Observed, path: str) -> None:
    """A body of 100,000 ``[`` to an action is a 4xx with a code (400 RUNTIME_INVALID_INPUT
    where the body is read), never a 500."""
    body = b"[" * 100_000
    host = f"127.0.0.1:{observed.server.port}".encode()
    head = (
        b"POST %s HTTP/1.1\r\nHost: %s\r\nOrigin: http://%s\r\nX-Praxo-Token: %s\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
    ) % (path.encode(), host, host, token_of(observed).encode(), len(body))
    status, reply = raw(observed, head + body)
    assert status < 500
    if path.startswith("/api/approvals"):
        assert (status, error_code(reply)) == (400, "RUNTIME_INVALID_INPUT")
