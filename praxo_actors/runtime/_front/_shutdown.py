"""Stopping a runtime: the tree in reverse order, then every thread, then the store."""

from __future__ import annotations

import atexit
import contextlib
from typing import TYPE_CHECKING

import pykka

from praxo_actors._errors import PraxoError
from praxo_actors._log import get_logger
from praxo_actors.actors import forbid_blocking

if TYPE_CHECKING:
    from praxo_actors.runtime._front._runtime import Runtime

__all__ = ["shutdown_in_order"]

logger = get_logger("praxo_actors.runtime")


def shutdown_in_order(rt: Runtime) -> None:
    """Stop a runtime's parts in order, on a thread that is not its loop's."""
    atexit.unregister(rt._at_exit)
    timeout = rt._config.timeout
    if not rt._loop.is_running():
        # The loop is gone (a process exiting without stop()): nothing can run the
        # sessions' stop any more, so mark them dead instead of waiting on each.
        rt._loop_scheduler.shutdown()
    with contextlib.suppress(PraxoError):
        rt._call(_begin_stop, rt, timeout=timeout)
    root = getattr(rt, "root", None)
    if root is not None:
        try:
            root.stop(timeout=timeout * 4)
        except pykka.ActorDeadError:
            pass  # the tree is already down (escalated past its restart budget)
        except pykka.Timeout:
            # Children past their shutdown time are abandoned by their supervisors; the
            # root itself did not answer in time. Release everything else regardless.
            logger.error("runtime_stop_timeout", timeout=timeout * 4)
    try:
        rt._call(_finish_stop, rt, timeout=timeout)
    except PraxoError:
        rt._router.stop_all()  # the loop is gone: nothing else touches the router now
    rt._bus.close(timeout=timeout)
    for name in rt._io_pool.shutdown(timeout):
        logger.error("io_thread_abandoned", thread=name)
    if rt._thread_scheduler is not None:
        rt._thread_scheduler.shutdown(timeout=timeout)
    _close_store(rt)
    thread = rt._loop_thread
    if thread is not None:
        with contextlib.suppress(RuntimeError):
            rt._loop.call_soon_threadsafe(rt._loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            rt._loop.close()
    logger.info("runtime_stopped")


def _begin_stop(rt: Runtime) -> None:
    rt._router.stopping = True
    if rt._janitor is not None:
        rt._janitor.cancel()


def _finish_stop(rt: Runtime) -> None:
    rt._router.stop_all()
    rt._router.activator.close()
    rt._host.bridge.cancel_all()
    rt._loop_scheduler.shutdown()
    if rt._loop_thread is None:
        forbid_blocking(-1)  # the caller's loop thread is its own again


def _close_store(rt: Runtime) -> None:
    rt._release_store()
    close = getattr(rt.store, "close", None)
    if rt._owns_store and callable(close):
        try:
            close()
        except Exception as exc:  # stopping goes on: the threads are already released
            logger.error("store_close_failed", error=repr(exc))
