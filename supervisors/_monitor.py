"""Monitors: learn, exactly once, that a Pykka actor has stopped and why, for any actor kind."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pykka

from supervisors import _pykka_compat as compat
from supervisors._watch import (
    _WATCH,
    Down,
    DownReason,
    _deliver,
    _Exits,
    _lock,
    _Watch,
    _watch_of_locked,
)

__all__ = ["Down", "DownReason", "Monitor", "monitor"]


class Monitor:
    """A handle on one monitor; ``cancel()`` stops it."""

    __slots__ = ("_key", "_watch", "ref")

    def __init__(self, ref: pykka.ActorRef[Any], watch: _Watch | None, key: int) -> None:
        self.ref = ref
        self._watch = watch
        self._key = key

    def cancel(self) -> bool:
        """Stop watching the actor.

        Returns:
            True if the ``Down`` had not been delivered yet (it never will be now).
        """
        watch = self._watch
        return watch is not None and watch.cancel(self._key)

    def _rebind(self, callback: Callable[[Down], None]) -> int | None:
        """Give this monitor another callback; return its key (for :func:`unwatch`), or None
        if its ``Down`` is delivered or on its way."""
        watch = self._watch
        return self._key if watch is not None and watch.rebind(self._key, callback) else None

    def __repr__(self) -> str:
        return f"<Monitor of {self.ref}>"


def monitor(ref: pykka.ActorRef[Any], callback: Callable[[Down], None]) -> Monitor:
    """Call ``callback(Down(...))`` once when the actor behind ``ref`` stops.

    The callback runs in the stopping actor's own thread, after ``on_stop`` for a stop and
    after ``on_failure`` for a handler's crash, and before Pykka's ``stop()`` returns to its
    caller; so it must be quick and must not wait on that actor: a supervisor's callback only
    tells the supervisor a message. Callbacks of one actor run in the order
    their monitors were set up. For an actor that is already stopped, the callback runs at
    once, in the caller's thread, with reason ``"noproc"`` (after the Downs of monitors set up
    earlier, if they are being delivered right now). An exception in a callback is
    logged (event ``monitor_callback_failed``) rather than raised: raising there
    would end the actor's thread in the middle of Pykka's own teardown.

    Args:
        ref: The actor to watch; any Pykka actor kind that keeps Pykka's lifecycle contract.
        callback: Receives the ``Down``.

    Returns:
        A ``Monitor``; ``cancel()`` it to stop watching.
    """
    watch, key = watch_actor(ref, callback)
    return Monitor(ref, watch, key)


def watch_actor(
    ref: pykka.ActorRef[Any], callback: Callable[[Down], None]
) -> tuple[_Watch | None, int]:
    """Set up a monitor as :func:`monitor` does, without its handle.

    Returns:
        The actor's watch and the monitor's key in it (for :meth:`_Watch.cancel` and
        :meth:`_Watch.rebind`), or ``(None, 0)`` when the ``noproc`` was delivered at once.
    """
    actor = compat.actor_of(ref)
    if actor is not None:
        waiter = None
        with _lock:
            watch = _watch_of_locked(actor)
            if watch.down is None and (watch.entered or not ref.actor_stopped.is_set()):
                key = watch.next_key
                watch.next_key += 1
                watch.put_locked(key, callback)
                return watch, key
            if watch.delivering is not None and watch.delivering != threading.get_ident():
                # Wait for the earlier monitors' Downs to be delivered, so that order holds for
                # noproc too (not from the delivering thread: a callback may monitor its actor).
                if watch.waiter is None:
                    watch.waiter = threading.Event()
                waiter = watch.waiter
        if waiter is not None:
            waiter.wait()
    _deliver(callback, Down(ref, "noproc"))
    return None, 0


def unwatch(ref: pykka.ActorRef[Any], key: int) -> bool:
    """Cancel the monitor ``key`` that :func:`watch_actor` set up on ``ref``'s actor.

    Returns:
        True if its ``Down`` had not been delivered yet (it never will be now).
    """
    actor = compat.actor_of(ref)
    watch: _Watch | None = getattr(actor, _WATCH, None) if actor is not None else None
    return watch is not None and watch.cancel(key)


def rebind(ref: pykka.ActorRef[Any], key: int, callback: Callable[[Down], None]) -> bool:
    """Give the monitor ``key`` on ``ref``'s actor another callback; False if it has fired."""
    actor = compat.actor_of(ref)
    watch: _Watch | None = getattr(actor, _WATCH, None) if actor is not None else None
    return watch is not None and watch.rebind(key, callback)


compat.install_exit_watcher(_Exits)
