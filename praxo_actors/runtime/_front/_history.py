"""``handle.history()``: a session's committed messages, from its actor or its checkpoint."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors._errors import PraxoError, ProtocolError
from praxo_actors.actors import MNFuture
from praxo_actors.codes import PROTOCOL_INVALID_MESSAGE, RUNTIME_TIMEOUT
from praxo_actors.models import Message
from praxo_actors.runtime._kernel._waits import check_timeout
from praxo_actors.runtime._protocol import (
    GetHistory,
    History,
    LoadSessions,
    Sessions,
    decode,
    encode,
)
from praxo_actors.runtime._session._restore import revive

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["ahistory", "history"]

# A future of the session's actor once it is live (None if it is not): SessionHandle._ready.
Ready = Callable[[], MNFuture[pykka.ActorRef[Any] | None]]


def history(ready: Ready, kernel: Kernel, session_id: str, timeout: float) -> list[Message]:
    """See :meth:`SessionHandle.history`."""
    check_timeout(timeout)
    try:
        ref = ready().get(timeout=timeout)
        if ref is not None:
            reply = _ask(ref, encode(GetHistory()))
            if reply is not None:
                try:
                    messages = _history(reply.get(timeout=timeout))
                except pykka.ActorDeadError:  # it stopped meanwhile: read the checkpoint
                    messages = None
                if messages is not None:
                    return messages
        document = _store_ask(kernel, session_id).get(timeout=timeout)
    except pykka.Timeout:
        raise PraxoError(RUNTIME_TIMEOUT, f"no history within {timeout} s") from None
    return _from_checkpoint(kernel, session_id, document)


async def ahistory(ready: Ready, kernel: Kernel, session_id: str, timeout: float) -> list[Message]:
    """See :meth:`SessionHandle.ahistory`."""
    check_timeout(timeout)
    try:
        async with asyncio.timeout(timeout):
            ref = await ready()
            if ref is not None:
                reply = _ask(ref, encode(GetHistory()))
                if reply is not None:
                    try:
                        messages = _history(await reply)
                    except pykka.ActorDeadError:
                        messages = None
                    if messages is not None:
                        return messages
            document = await _store_ask(kernel, session_id)
    except TimeoutError:
        raise PraxoError(RUNTIME_TIMEOUT, f"no history within {timeout} s") from None
    return _from_checkpoint(kernel, session_id, document)


def _store_ask(kernel: Kernel, session_id: str) -> pykka.Future[Any]:
    """Ask the store for this session's log, through the kernel on the loop."""
    return kernel.ask_store(encode(LoadSessions([session_id])))


def _from_checkpoint(kernel: Kernel, session_id: str, reply: Any) -> list[Message]:
    decoded = decode(reply)
    if not isinstance(decoded, Sessions):
        raise ProtocolError(PROTOCOL_INVALID_MESSAGE, "bad store reply")
    host = kernel.host
    session, _ = revive(decoded.states[0], session_id, host.allowed_types, host.key)
    return session.messages


def _ask(ref: pykka.ActorRef[Any], message: bytes) -> pykka.Future[Any] | None:
    try:
        return ref.ask(message, block=False)
    except pykka.ActorDeadError:
        return None


def _history(reply: Any) -> list[Message] | None:
    if reply is None:
        return None
    decoded = decode(reply)
    return decoded.messages if isinstance(decoded, History) else None
