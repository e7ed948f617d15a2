"""The observer's door: which ``Host`` it answers, and who may change anything.

Every request must name, in its ``Host`` header, a host the app was served on: a page fetched
through a rebound DNS name (``evil.example`` resolving to 127.0.0.1) is refused, so a web page
elsewhere cannot read the observer through the user's browser. By default that is the address
the server listens on (the ASGI scope's ``server``) and, for a loopback address, ``localhost``,
``127.0.0.1`` and ``[::1]`` on the same port; ``allowed_hosts`` replaces it.

A request that changes state must be ``POST`` (the routes say so: another method is 405), carry
an ``Origin`` equal to the page's own origin, and the page's token in ``X-Praxo-Token``: a form
or script of another origin has neither.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable, Iterable, MutableMapping
from typing import Any

from starlette.responses import JSONResponse

from praxo_actors.codes import (
    OBSERVER_HOST_REFUSED,
    OBSERVER_ORIGIN_REFUSED,
    OBSERVER_TOKEN_REFUSED,
)

__all__ = ["Guard", "host_allowed"]

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Any]
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def _split(authority: str, default_port: int) -> tuple[str, int] | None:
    """Return ``(host, port)`` of ``host[:port]`` (lower-cased; None if malformed)."""
    authority = authority.strip().lower()
    if not authority:
        return None
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            return None
        host, rest = authority[: end + 1], authority[end + 1 :]
    else:
        host, _, port_text = authority.partition(":")
        rest = ":" + port_text if port_text else ""
    if not rest:
        return host, default_port
    # ASCII digits only: str.isdigit() admits "²", which int() then refuses.
    if not rest.startswith(":") or not (rest[1:].isascii() and rest[1:].isdigit()):
        return None
    return host, int(rest[1:])


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_allowed(host_header: str, scope: Scope, allowed: tuple[str, ...] | None) -> bool:
    """Say whether ``host_header`` names a host this request may be answered for."""
    default = _DEFAULT_PORTS.get(scope.get("scheme", "http"), 80)
    wanted = _split(host_header, default)
    if wanted is None:
        return False
    if allowed is not None:
        # An entry without a port allows its host on any port.
        entries = [_split(entry, -1) for entry in allowed]
        return any(e is not None and e[0] == wanted[0] and e[1] in (-1, wanted[1]) for e in entries)
    server = scope.get("server")
    if not server:
        return False
    bound, port = str(server[0]).lower(), server[1]
    if port is None:
        port = default
    if ":" in bound and not bound.startswith("["):
        bound = f"[{bound}]"
    names = {bound}
    if _is_loopback(bound):
        names.update(_LOOPBACK_NAMES)
    return wanted[1] == port and wanted[0] in names


class Guard:
    """ASGI middleware: refuse a foreign ``Host`` (421) and an unproven ``POST`` (403).

    Args:
        app: The app behind the door.
        token: The page's token, required in ``X-Praxo-Token`` on every ``POST``.
        allowed_hosts: ``host`` or ``host:port`` entries accepted in ``Host`` (None: the
            address served on, and the loopback names for a loopback address).
    """

    def __init__(self, app: ASGIApp, token: str, allowed_hosts: Iterable[str] | None) -> None:
        self._app = app
        self._token = token.encode()
        self._allowed = None if allowed_hosts is None else tuple(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Answer one request, or refuse it before the app sees it."""
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if not host_allowed(host, scope, self._allowed):
            await _refuse(421, OBSERVER_HOST_REFUSED, f"not served for host {host!r}")(
                scope, receive, send
            )
            return
        if scope["method"] == "POST":
            origin = headers.get("origin")
            scheme = scope.get("scheme", "http")
            if origin is None or origin.lower() != f"{scheme}://{host}".lower():
                await _refuse(403, OBSERVER_ORIGIN_REFUSED, "not from the observer's page")(
                    scope, receive, send
                )
                return
            token = headers.get("x-praxo-token", "").encode("latin-1")
            if not hmac.compare_digest(token, self._token):
                await _refuse(403, OBSERVER_TOKEN_REFUSED, "missing or wrong X-Praxo-Token")(
                    scope, receive, send
                )
                return
        await self._app(scope, receive, send)


def _refuse(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)
