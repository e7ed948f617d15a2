"""A resumed run's events, as an async iterator (``astream`` gives a new run's).

``handle.resume(value)`` returns the resumed run's future; its events are the session's,
of the interrupted run's id, which the future takes once the runtime has found that run
(before any of its events is published). The iterator subscribes before resuming, so nothing
is missed, ends after the run's terminal event, and raises the resume's own error (say
``SESSION_NOT_INTERRUPTED``) when the run never went on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.codes import AGENT_CALLBACK_EXCEPTION, RUNTIME_TIMEOUT
from praxo_actors.models import Event

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime, SessionHandle

__all__ = ["TERMINAL", "resumed"]

TERMINAL = frozenset({"run.completed", "run.failed", "run.interrupted"})

_SETTLED = object()
_CLOSED = object()


async def resumed(
    runtime: Runtime, handle: SessionHandle, value: Any, timeout: float
) -> AsyncIterator[Event]:
    """Resume ``handle``'s interrupted run with ``value``; yield its events to the terminal one.

    Raises:
        PraxoError: The resume's error when the run did not go on; ``RUNTIME_TIMEOUT`` when
            its terminal event is not seen within ``timeout`` seconds of its settling.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()

    def put(item: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            loop.call_soon_threadsafe(queue.put_nowait, item)

    sub = runtime.events.subscribe(put, "*", handle.id)
    sub.on_close = lambda: put(_CLOSED)  # the runtime stops, or serve() ends the streams
    try:
        future = handle.resume(value)
        future.add_done_callback(lambda _f: put(_SETTLED))
        seen = False
        settled = False
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), timeout if settled else None)
            except TimeoutError:
                raise PraxoError(
                    RUNTIME_TIMEOUT, "the resumed run's last event did not come"
                ) from None
            except asyncio.CancelledError:
                future.cancel()
                raise
            if item is _CLOSED:
                return
            if item is _SETTLED:
                settled = True
                if not seen:
                    _raise_failure(future)
                continue
            if isinstance(item, Event) and item.run_id == future.run_id:
                seen = True
                yield item
                if item.type in TERMINAL:
                    return
    finally:
        sub.on_close = None
        sub.unsubscribe()


def _raise_failure(future: Any) -> None:
    """Raise the settled ``future``'s error, if it has one, as a ``PraxoError``."""
    try:
        future.get(timeout=0)
    except PraxoError:
        raise
    except Exception as exc:
        raise AgentError(AGENT_CALLBACK_EXCEPTION, f"{type(exc).__name__}: {exc}") from None
