"""Start ``async def`` callbacks as tasks on an event loop; report each outcome to a callback.

Called on the loop's thread. From another thread, post :meth:`LoopBridge.start` to the loop
with :meth:`~praxo_actors.actors.LoopGate.post`, which wakes the loop once per burst of calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from contextvars import Context
from typing import Any

from praxo_actors.actors._checks import loop_owned

__all__ = ["LoopBridge"]

Outcome = Callable[[bool, Any], None]


async def _deliver(
    coro: Coroutine[Any, Any, Any], done: Outcome, tasks: set[asyncio.Task[Any]]
) -> None:
    """Await ``coro`` and report its outcome from inside the task's last step.

    Reporting here rather than from a done callback saves a turn of the loop per call. Any
    ``BaseException`` but the task's own cancellation (``KeyboardInterrupt``, ``SystemExit``,
    ``GeneratorExit``, a subclass of the user's) is reported like any exception and not
    re-raised: raised out of a task, asyncio re-raises the first two through ``run_forever`` (the
    loop thread, with every actor on it, would die) and swallows the others, so the
    run would never hear of its callback again.
    """
    try:
        value = await coro
    except asyncio.CancelledError:
        done(False, RuntimeError("the callback was cancelled (its loop is stopping)"))
        raise
    except BaseException as exc:  # KeyboardInterrupt, SystemExit, GeneratorExit, the user's own
        done(False, exc)
    else:
        done(True, value)
    finally:
        # Here, not in a done callback: that would cost a turn of the loop per call.
        tasks.discard(asyncio.current_task())


@loop_owned
class LoopBridge:
    """Start coroutines on ``loop`` (from its own thread); report each outcome to a callback.

    Its set of tasks is the loop thread's: with the debug checks on, a call from another thread
    (once its owner named the loop's, see :func:`~praxo_actors.actors._checks.set_owner`) fails.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._tasks: set[asyncio.Task[Any]] = set()

    def start(
        self,
        fn: Callable[..., Coroutine[Any, Any, Any]],
        args: tuple[Any, ...],
        done: Outcome,
        context: Context | None = None,
    ) -> asyncio.Task[Any] | None:
        """Call ``fn(*args)`` as a task (run in ``context``) and await it; then ``done(ok, value)``.

        ``done`` runs on the loop's thread: keep it short. Return the task started.
        """
        try:
            coro = fn(*args) if context is None else context.run(fn, *args)
            task = self._loop.create_task(_deliver(coro, done, self._tasks), context=context)
        except Exception as exc:  # fn raised before returning its coroutine
            done(False, exc)
            return None
        self._tasks.add(task)
        return task

    def start_in(
        self,
        wrapper: Callable[..., Coroutine[Any, Any, Any]],
        fn: Callable[..., Coroutine[Any, Any, Any]],
        args: tuple[Any, ...],
        context: Context,
        *fields: Any,
    ) -> asyncio.Task[Any]:
        """Call ``fn(*args)`` in ``context`` and run ``wrapper(coro, tasks, *fields)`` as its
        task, in ``context``; return the task.

        For a caller whose outcome needs a few fields: ``wrapper`` (an ``async def``) holds them
        in its own frame, where :meth:`start`'s ``done`` would be one more object per task in
        flight. ``wrapper`` awaits ``coro``, reports its outcome as :func:`_deliver` does
        (its cancellation too), and discards its task from ``tasks`` at its end.

        Raises:
            BaseException: What ``fn`` raised before returning its coroutine (nothing started).
        """
        coro = context.run(fn, *args)
        tasks = self._tasks
        task = self._loop.create_task(wrapper(coro, tasks, *fields), context=context)
        tasks.add(task)
        return task

    def cancel_all(self) -> None:
        """Cancel every task started here (on the loop's thread, when its owner stops)."""
        for task in list(self._tasks):
            task.cancel()
