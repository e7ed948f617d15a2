"""The threads an owner of an event loop needs: the loop's own, and short-lived ones for a block."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from praxo_actors.actors._blocking import forbid_blocking

__all__ = ["in_thread", "serve_loop"]

T = TypeVar("T")


def serve_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Run ``loop`` forever on the calling thread, where blocking waits are refused.

    A thread's target: blocking on the thread that runs the loop's actors would deadlock it.
    """
    asyncio.set_event_loop(loop)
    forbid_blocking(1)
    try:
        loop.run_forever()
    finally:
        forbid_blocking(-1)


async def in_thread(fn: Callable[[], T]) -> T:
    """Run blocking ``fn`` on a short-lived thread while the running loop goes on serving.

    Not the loop's default executor: its threads outlive the call (and every test checks that
    an owner leaves no thread behind). The thread is always waited for, even on cancellation.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is None:
            done.set_result(value)
        else:
            done.set_exception(error)

    def work() -> None:
        try:
            value, error = fn(), None
        except BaseException as exc:
            value, error = None, exc
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, value, error)

    thread = threading.Thread(target=work, name="praxo-blocking", daemon=True)
    thread.start()
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await done
        raise
    finally:
        thread.join()
