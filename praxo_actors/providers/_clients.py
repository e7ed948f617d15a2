"""One SDK client per event loop: an async HTTP client's connections belong to the loop they
were opened on, and one model may be called from several loops (the runtime's, a service's,
``asyncio.run`` in a script).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Self

from praxo_actors.models import ModelError, Response

__all__ = ["LoopClients"]


class LoopClients:
    """The client each event loop calls the model with; made on demand, closed on request.

    A client given by the user is used on every loop and never closed here: its owner
    knows which loop it belongs to.

    Args:
        make: Builds a new client (the SDK's constructor with the model's settings).
        given: The user's own client, or None.
    """

    def __init__(self, make: Callable[[], Any], given: Any = None) -> None:
        self._make = make
        self._given = given
        self._lock = threading.Lock()
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        # Made at once, so that bad settings fail the factory call; the first loop claims it.
        self._spare: Any = make() if given is None else None
        # Where every client connects: telemetry's server.address and server.port.
        self.base_url: Any = getattr(given or self._spare, "base_url", None)

    def sample(self) -> Any:
        """Return a client with the model's settings, to inspect (not to call on a loop)."""
        return self._given or self._spare or self._make()

    def get(self) -> Any:
        """Return the client of the running event loop (making it on first use)."""
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._by_loop.get(loop)
            if client is None:
                client, self._spare = self._spare or self._make(), None
                self._by_loop[loop] = client
            return client

    async def aclose(self) -> None:
        """Close the client of the running loop; the next call makes a new one."""
        with self._lock:
            client = self._by_loop.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def close(self, timeout: float = 10.0) -> None:
        """Close every client this model made, each on its own loop, from outside those loops.

        A loop that is running (on another thread) closes its client there; a loop that is
        not running closes it here; a closed loop's client cannot be closed any more and is
        dropped.

        Raises:
            RuntimeError: Called on a thread whose loop holds a client: use :meth:`aclose`.
            TimeoutError: A loop did not close its client within ``timeout`` seconds.
        """
        with self._lock:
            clients, self._by_loop = list(self._by_loop.items()), weakref.WeakKeyDictionary()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        for loop, client in clients:
            if loop is running:
                raise RuntimeError("close() on the loop that uses the model: await aclose()")
            if loop.is_closed():
                continue
            if loop.is_running():
                future = asyncio.run_coroutine_threadsafe(client.close(), loop)
                try:
                    future.result(timeout)
                except concurrent.futures.TimeoutError:
                    future.cancel()
                    raise TimeoutError(f"a client was not closed within {timeout} s") from None
            else:
                loop.run_until_complete(client.close())


class ClientModel:
    """What both provider models share: their SDK clients, one per event loop, closing, and the
    steps of a call that do not depend on the API (failures to codes, a stream to deltas)."""

    _clients: LoopClients
    _sdk: Any
    provider: str  # the name errors are reported under
    timeout: float | None  # the deadline of one call, in seconds

    async def _send(self, call: Awaitable[Any]) -> Any:
        """Await the SDK call within the model's deadline; a failure comes back as its code.

        The deadline bounds the whole call, the body or the stream read to its end included:
        an HTTP client's read limit starts again at every byte, so a server that trickles
        bytes or streams without end would outlast it. A body or stream event that is not
        JSON is ``MODEL_BAD_RESPONSE``; an HTTP or connection failure has its own code.
        """
        from praxo_actors.providers._errors import MODEL_TIMEOUT, model_error
        from praxo_actors.providers._wire import BODY_ERRORS, bad_body

        deadline = asyncio.timeout(self.timeout)
        try:
            async with deadline:
                return await call
        except Exception as exc:
            if deadline.expired():  # what escapes is the deadline's cancellation
                return ModelError(
                    MODEL_TIMEOUT, f"{self.provider}: no whole answer within {self.timeout:g} s"
                )
            if isinstance(exc, BODY_ERRORS):
                return bad_body(self.provider, exc)
            error = model_error(self._sdk, exc, self.provider)
            if error is None:
                raise
            return error

    def _read(
        self, read: Callable[..., Response | ModelError], *args: Any
    ) -> Response | ModelError:
        """Return ``read(*args)``: the reply read from an answer, or ``MODEL_BAD_RESPONSE``
        when the answer has a field missing or of the wrong type."""
        from praxo_actors.providers._wire import SHAPE_ERRORS, bad_shape

        try:
            return read(*args)
        except SHAPE_ERRORS as exc:
            return bad_shape(self.provider, exc)

    async def _drain(
        self,
        stream: Any,
        add: Callable[[Any], str | None],
        emit: Callable[[str], None] | None = None,
    ) -> ModelError | None:
        """Feed each part of ``stream`` to ``add`` (an assembler's), sending the text it returns
        to ``emit`` (None: as ``model.delta`` events); a part of the wrong shape ends it with
        that error."""
        from praxo_actors.agent import model_context
        from praxo_actors.providers._wire import SHAPE_ERRORS, bad_shape

        if emit is None:
            context = model_context()
            emit = None if context is None else context.delta
        async with stream:
            async for part in stream:
                try:
                    text = add(part)
                except SHAPE_ERRORS as exc:
                    return bad_shape(self.provider, exc)
                if text and emit is not None:
                    emit(text)
        return None

    async def aclose(self) -> None:
        """Close the client of the running event loop (a given ``client`` stays open)."""
        await self._clients.aclose()

    def close(self, timeout: float = 10.0) -> None:
        """Close every client this model made, from outside their loops (see ``LoopClients``)."""
        self._clients.close(timeout)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
