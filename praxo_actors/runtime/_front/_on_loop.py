"""Run work that reads the router on the runtime's loop, from a thread or from a coroutine.

The router's state belongs to the loop thread (see :mod:`~praxo_actors.runtime._kernel._router`). A
blocking front posts the work there and waits, bounded; a coroutine twin runs it directly
when it is already on that loop, and otherwise awaits it without blocking its own loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.actors import MNFuture
from praxo_actors.codes import RUNTIME_STOPPED, RUNTIME_TIMEOUT

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["acall", "arun_on_loop", "on_loop", "run_on_loop"]

T = TypeVar("T")


def on_loop(host: SessionHost) -> bool:
    """Return whether the caller runs on the runtime's loop thread."""
    return threading.get_ident() == host.loop_thread_id


def run_on_loop(host: SessionHost, work: Callable[[], Coroutine[Any, Any, T]], timeout: float) -> T:
    """Run the coroutine ``work()`` on the runtime's loop and wait for it (off that loop).

    Raises:
        PraxoError: ``RUNTIME_STOPPED`` if the loop is closed; ``RUNTIME_TIMEOUT``; what
            ``work`` raised.
    """
    future = _submit(host, work, timeout)
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise PraxoError(RUNTIME_TIMEOUT, f"no answer within {timeout} s") from None


async def arun_on_loop(
    host: SessionHost, work: Callable[[], Coroutine[Any, Any, T]], timeout: float
) -> T:
    """Run the coroutine ``work()`` on the runtime's loop and await it, from any loop.

    Raises:
        PraxoError: As :func:`run_on_loop`.
    """
    if on_loop(host):
        return await _bounded(work, timeout)
    future = _submit(host, work, timeout)
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.wrap_future(future)
    except TimeoutError:
        future.cancel()
        raise PraxoError(RUNTIME_TIMEOUT, f"no answer within {timeout} s") from None


async def acall(host: SessionHost, fn: Callable[..., T], *args: Any, timeout: float) -> T:
    """Call ``fn(*args)`` on the runtime's loop thread and await its result, from any loop.

    Raises:
        PraxoError: ``RUNTIME_STOPPED`` if the loop is closed; ``RUNTIME_TIMEOUT``; what
            ``fn`` raised.
    """
    if on_loop(host):
        return fn(*args)
    future: MNFuture[T] = MNFuture()

    def call() -> None:
        try:
            future.set(fn(*args))
        except Exception:
            future.set_exception()

    if not host.post(call):
        raise AgentError(RUNTIME_STOPPED, "the runtime has stopped")
    try:
        async with asyncio.timeout(timeout):
            return await future
    except TimeoutError:
        raise PraxoError(RUNTIME_TIMEOUT, f"no answer within {timeout} s") from None


def _submit(
    host: SessionHost, work: Callable[[], Coroutine[Any, Any, T]], timeout: float
) -> concurrent.futures.Future[T]:
    coroutine = _bounded(work, timeout)
    try:
        return asyncio.run_coroutine_threadsafe(coroutine, host.loop)
    except RuntimeError:  # the loop is closed: the runtime has stopped
        coroutine.close()
        raise AgentError(RUNTIME_STOPPED, "the runtime has stopped") from None


async def _bounded(work: Callable[[], Coroutine[Any, Any, T]], timeout: float) -> T:
    try:
        async with asyncio.timeout(timeout):
            return await work()
    except TimeoutError:
        raise PraxoError(RUNTIME_TIMEOUT, f"no answer within {timeout} s") from None
