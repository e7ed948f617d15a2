"""``handle.stop()`` and ``handle.passivate()``: end a session's actor and wait for it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors._errors import PraxoError
from praxo_actors.actors import MNFuture, in_thread
from praxo_actors.codes import RUNTIME_TIMEOUT
from praxo_actors.runtime._front._on_loop import acall
from praxo_actors.runtime._kernel._waits import check_timeout

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["astop_with", "stop_with"]

# A future of the session's actor once it is live (None if it is not): SessionHandle._ready.
Ready = Callable[[], MNFuture[pykka.ActorRef[Any] | None]]

How = Callable[[str], pykka.ActorRef[Any] | None]


def stop_with(ready: Ready, kernel: Kernel, session_id: str, how: How, timeout: float) -> bool:
    """See :meth:`SessionHandle.stop`: ``how`` is the kernel's way to end the session."""
    check_timeout(timeout)
    try:
        if ready().get(timeout=timeout) is None:
            return False
        ref = kernel.call(how, session_id, timeout=timeout)
    except pykka.Timeout:
        raise PraxoError(RUNTIME_TIMEOUT, f"session not ready within {timeout} s") from None
    if ref is None:
        return False
    if not ref.actor_stopped.wait(timeout):
        raise PraxoError(RUNTIME_TIMEOUT, f"session did not stop within {timeout} s")
    return True


async def astop_with(
    ready: Ready, kernel: Kernel, session_id: str, how: How, timeout: float
) -> bool:
    """:func:`stop_with`, awaited (safe on the runtime's own loop)."""
    check_timeout(timeout)
    try:
        async with asyncio.timeout(timeout):
            if await ready() is None:
                return False
            ref = await acall(kernel.host, how, session_id, timeout=timeout)
            if ref is None:
                return False
            # Pykka says an actor has stopped only through a threading.Event.
            stopped = await in_thread(lambda: ref.actor_stopped.wait(timeout))
    except TimeoutError:
        raise PraxoError(RUNTIME_TIMEOUT, f"session not stopped within {timeout} s") from None
    if not stopped:
        raise PraxoError(RUNTIME_TIMEOUT, f"session did not stop within {timeout} s")
    return True
