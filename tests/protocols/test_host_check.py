"""``HostCheck``: the protocol apps' door keeps refusing foreign hosts once it has let others in."""

from __future__ import annotations

import asyncio
from typing import Any

from praxo_actors.protocols._http import HostCheck


def ask(door: HostCheck, host: bytes, server: Any = ("127.0.0.1", 8000)) -> int:
    """Return the status ``door`` answers a GET naming ``host`` to a server at ``server``."""
    scope = {"type": "http", "method": "GET", "path": "/", "headers": [(b"host", host)]}
    scope["scheme"] = "http"
    scope["server"] = server
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    asyncio.run(door(scope, receive, send))
    return statuses[0]


async def ok(_scope: Any, _receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def test_an_accepted_host_does_not_open_the_door_to_others() -> None:
    """After a loopback Host is let in (twice), a foreign Host, another port and the same
    Host on another server are still 421."""
    door = HostCheck(ok)
    assert ask(door, b"127.0.0.1:8000") == 200
    assert ask(door, b"127.0.0.1:8000") == 200
    assert ask(door, b"localhost:8000") == 200
    assert ask(door, b"evil.example:8000") == 421
    assert ask(door, b"127.0.0.1:9000") == 421
    assert ask(door, b"127.0.0.1:8000", server=["10.0.0.5", 8000]) == 421
    assert ask(door, b"127.0.0.1:8000", server=["127.0.0.1", 8000]) == 200


def test_allowed_hosts_are_remembered_within_a_bound() -> None:
    """Past the bound of remembered hosts, each is decided again, and still right."""
    door = HostCheck(ok, allowed_hosts=["api.example"])
    for port in range(1000, 1100):
        assert ask(door, f"api.example:{port}".encode()) == 200
    assert ask(door, b"api.example:1200") == 200
    assert ask(door, b"evil.example:1200") == 421
