"""What every protocol app does at its door: the ``Host`` check, a bounded JSON body, 4xx codes.

Imported by the apps when they are built (it needs Starlette, the ``protocols`` extra).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, MutableMapping
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse

from praxo_actors._errors import PraxoError
from praxo_actors.codes import PROTOCOL_BAD_JSON, PROTOCOL_HOST_REFUSED, PROTOCOL_TOO_LARGE
from praxo_actors.observer._guard import host_allowed

__all__ = [
    "MAX_BODY",
    "CancelOnDisconnect",
    "Door",
    "EventStream",
    "HostCheck",
    "Refused",
    "error_body",
    "read_body",
    "read_json",
]

MAX_BODY = 4 * 1024 * 1024
"""The largest request body the apps read (bytes); a larger one is 413 PROTOCOL_TOO_LARGE."""

_VERSIONS = {"2.0": (2, 0), "2.1": (2, 1), "2.2": (2, 2), "2.3": (2, 3), "2.4": (2, 4)}
_ACCEPTED_KEPT = 64  # allowed Host triples remembered; past that each is decided again

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Any]


class Refused(PraxoError):
    """A request the app answers with ``status`` and ``code`` instead of serving it."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(code, message)
        self.status = status


def error_body(code: str, message: str) -> dict[str, Any]:
    """Return the JSON body of a refusal: ``{"error": {"code", "message"}}``."""
    return {"error": {"code": code, "message": message}}


class HostCheck:
    """ASGI middleware: answer only the hosts the app is served on (421 PROTOCOL_HOST_REFUSED).

    As the observer does: by default the address the server listens on and, for a loopback
    address, ``localhost``, ``127.0.0.1`` and ``[::1]`` on its port; ``allowed_hosts`` (``host``
    or ``host:port`` entries) replaces that.
    """

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] | None = None) -> None:
        self._app = app
        self._allowed = None if allowed_hosts is None else tuple(allowed_hosts)
        # The (Host, scheme, server) triples found allowed: every request of a client names
        # the same, and deciding parses addresses (a tenth of a millisecond a request).
        self._accepted: set[tuple[bytes, str, Any]] = set()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Pass the request on, or refuse it before the app sees it."""
        if scope["type"] == "http":
            raw = b""
            for key, value in scope["headers"]:
                if key == b"host":
                    raw = value
                    break
            server = scope.get("server")
            seen = (raw, scope.get("scheme", "http"), tuple(server) if server else None)
            if seen not in self._accepted:
                host = raw.decode("latin-1")
                if not host_allowed(host, scope, self._allowed):
                    body = error_body(PROTOCOL_HOST_REFUSED, f"not served for host {host!r}")
                    await JSONResponse(body, status_code=421)(scope, receive, send)
                    return
                if len(self._accepted) < _ACCEPTED_KEPT:
                    self._accepted.add(seen)
        await self._app(scope, receive, send)


class Door:
    """ASGI: send a ``POST`` to ``path`` (under the prefix the app is mounted at) straight to
    ``post``; anything else (other routes, the lifespan, 404s and 405s) to ``rest``.

    A protocol's one hot route so skips the router and middleware of a Starlette app.
    """

    def __init__(self, path: str, post: ASGIApp, rest: ASGIApp) -> None:
        self._paths = {path, path.rstrip("/") or "/", path.rstrip("/")}
        self._post = post
        self._rest = rest

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Route the request."""
        if scope["type"] == "http" and scope["method"] == "POST":
            path: str = scope["path"]
            root: str = scope.get("root_path", "")
            if root and path.startswith(root):
                path = path[len(root) :]
            if path in self._paths:
                await self._post(scope, receive, send)
                return
        await self._rest(scope, receive, send)


async def read_body(receive: Any, limit: int = MAX_BODY) -> bytes:
    """Return the request's body, read from ASGI ``receive`` (what came, if the client left).

    Raises:
        Refused: 413 ``PROTOCOL_TOO_LARGE`` beyond ``limit`` bytes.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise Refused(413, PROTOCOL_TOO_LARGE, f"the body is over {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def read_json(request: Request, limit: int = MAX_BODY) -> Any:
    """Return the request's JSON body.

    Raises:
        Refused: 413 ``PROTOCOL_TOO_LARGE`` beyond ``limit`` bytes; 400 ``PROTOCOL_BAD_JSON`` for
            a body that is not JSON (nested too deep included).
    """
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Refused(413, PROTOCOL_TOO_LARGE, f"the body is over {limit} bytes")
        chunks.append(chunk)
    try:
        return msgspec.json.decode(b"".join(chunks))
    except (msgspec.DecodeError, RecursionError) as exc:
        raise Refused(400, PROTOCOL_BAD_JSON, f"the body is not JSON: {exc}") from None


class EventStream(StreamingResponse):
    """A streamed response that ends its stream, as Starlette's does, when the client leaves.

    Starlette's ``StreamingResponse`` watches for the client's disconnect (under ASGI < 2.4,
    uvicorn's) from an anyio task group it opens for every response: a third of the CPU an
    AG-UI run's response costs. On asyncio this one streams in the request's own task and
    watches in one plain task, which cancels the stream when the client leaves (its
    generator is closed, and its run cancelled, as before); elsewhere it is Starlette's.
    """

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Send the stream; stop it quietly if the client disconnects first."""
        spec = scope.get("asgi", {}).get("spec_version", "2.0")
        try:
            task = asyncio.current_task()
        except RuntimeError:  # not on asyncio
            task = None
        if task is None or scope["type"] != "http" or _version(spec) >= (2, 4):
            await super().__call__(scope, receive, send)
            return
        gone = False
        streaming = True

        async def watch() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            if streaming:  # never after the stream ended: the cancel would hit its caller
                gone = True
                task.cancel()

        watcher = asyncio.get_running_loop().create_task(watch())
        try:
            await self.stream_response(send)
        except asyncio.CancelledError:
            # Only the watcher's own cancellation ends the response quietly.
            if not gone or task.uncancel() > 0:
                raise
        finally:
            streaming = False
            watcher.cancel()
        if self.background is not None:
            await self.background()


class CancelOnDisconnect:
    """ASGI middleware: a client that leaves before its answer is whole cancels the request.

    For an app that answers a ``POST`` in the request's own task (a JSON response) and does
    not watch for the client's disconnect itself: once the app has read the body, one plain
    task watches, and cancels the request's task if the client leaves before the last byte
    of the answer is sent (the app's own later reads hear of the disconnect as it comes).
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Pass the request on; cancel it quietly if the client leaves first."""
        try:
            task = asyncio.current_task()
        except RuntimeError:  # not on asyncio
            task = None
        if task is None or scope["type"] != "http" or scope.get("method") != "POST":
            await self._app(scope, receive, send)
            return
        watcher: asyncio.Task[None] | None = None
        gone = False
        answered = False

        async def watch() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            if not answered:  # never after the answer: the cancel would hit its caller
                gone = True
                task.cancel()

        async def read() -> Any:
            nonlocal watcher
            if watcher is not None:  # the body is read: only the disconnect is left
                await asyncio.shield(watcher)
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                watcher = asyncio.get_running_loop().create_task(watch())
            return message

        async def respond(message: Any) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True
            await send(message)

        try:
            await self._app(scope, read, respond)
        except asyncio.CancelledError:
            # Only the watcher's own cancellation ends the request quietly.
            if not gone or task.uncancel() > 0:
                raise
        finally:
            answered = True
            if watcher is not None:
                watcher.cancel()


def _version(spec: str) -> tuple[int, ...]:
    known = _VERSIONS.get(spec)
    if known is not None:
        return known
    try:
        return tuple(int(part) for part in spec.split("."))
    except ValueError:
        return (2, 0)
