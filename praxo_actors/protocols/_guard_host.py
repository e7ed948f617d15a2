"""The door of the A2A app and the MCP server's HTTP app: only the ``Host`` they are served on.

As the observer does (its :func:`~praxo_actors.observer._guard.host_allowed`): by default the
address the server listens on and, for a loopback address, ``localhost``, ``127.0.0.1`` and
``[::1]`` on its port; ``allowed_hosts`` (``host`` or ``host:port`` entries) replaces that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping
from typing import Any

from praxo_actors.observer._guard import host_allowed

__all__ = ["HostOnly", "refusal"]

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Any]


def refusal(code: str, message: str) -> dict[str, Any]:
    """Return the JSON body of a refusal: ``{"error": {"code", "message"}}``."""
    return {"error": {"code": code, "message": message}}


class HostOnly:
    """ASGI middleware: refuse a request for a foreign ``Host`` (421 ``PROTOCOL_HOST_REFUSED``)."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] | None = None) -> None:
        self._app = app
        self._allowed = None if allowed_hosts is None else tuple(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Pass the request on, or refuse it before the app sees it."""
        if scope["type"] == "http":
            host = ""
            for key, value in scope["headers"]:
                if key == b"host":
                    host = value.decode("latin-1")
                    break
            if not host_allowed(host, scope, self._allowed):
                from starlette.responses import JSONResponse

                body = refusal("PROTOCOL_HOST_REFUSED", f"not served for host {host!r}")
                await JSONResponse(body, status_code=421)(scope, receive, send)
                return
        await self._app(scope, receive, send)
