"""Monitors: learn, exactly once, that a Pykka actor has stopped and why, for any actor kind."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

import pykka

from supervisors import _pykka_compat as compat
from supervisors._log import get_logger

__all__ = ["Down", "DownReason", "Monitor", "monitor"]

logger = get_logger("supervisors")

DownReason = Literal["normal", "crash", "noproc"]

# Why these hook points. Pykka 4.5 has no links or monitors, and an actor ends through one of
# two exits of the lifecycle contract that every actor kind keeps (see supervisors._pykka_compat):
# wrapping both on the *instance* catches every end for any actor class, costs no thread per
# actor (10,000 children stay cheap), and tells a normal stop from a crash. `on_failure` is
# wrapped so that a handler's crash is reported after it, and `actor_stopped.set` only as a
# backstop for an actor that was already inside an unwrapped exit when the monitor was set up.
_WATCH = "_supervisors_watch"
_install_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Down:
    """The notice a monitor delivers, once, when its actor stops.

    Attributes:
        ref: The actor that stopped.
        reason: ``"normal"`` (stopped through a stop message), ``"crash"`` (an exception
            escaped ``on_start``, a tell handler, ``on_stop`` or ``on_failure``, or an ask
            handler of a ``CrashOnAskError`` actor) or ``"noproc"`` (the actor was already
            stopped when the monitor was set up).
        exception: The exception that ended the actor, when known.
    """

    ref: pykka.ActorRef[Any]
    reason: DownReason
    exception: BaseException | None = None


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
        if watch is None:
            return False
        with watch.lock:
            return watch.callbacks.pop(self._key, None) is not None

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
    actor = compat.actor_of(ref)
    if actor is not None:
        watch = _watch_of(actor)
        with watch.lock:
            if watch.down is None and (watch.entered or not ref.actor_stopped.is_set()):
                key = watch.next_key
                watch.next_key += 1
                watch.callbacks[key] = callback
                return Monitor(ref, watch, key)
        # Wait for the earlier monitors' Downs to be delivered, so that order holds for
        # noproc too (reentrant: a callback may set up a monitor of the same actor).
        with watch.delivering:
            pass
    _deliver(callback, Down(ref, "noproc"))
    return Monitor(ref, None, 0)


class _Watch:
    """The monitors of one actor, the wrappers that report its end, and the ``Down``."""

    __slots__ = (
        "actor",
        "callbacks",
        "delivering",
        "down",
        "entered",
        "event",
        "lock",
        "next_key",
        "original_failure",
        "original_on_failure",
        "original_set",
        "original_stop",
        "pending",
        "ref",
    )

    def __init__(self, actor: pykka.Actor) -> None:
        self.lock = threading.Lock()
        self.delivering = threading.RLock()  # held while the Down is being delivered
        self.callbacks: dict[int, Callable[[Down], None]] = {}
        self.down: Down | None = None
        self.entered = False  # the actor has begun to stop through a wrapper
        self.pending: BaseException | None = None  # a crash whose on_failure is to come
        self.next_key = 0
        self.ref: pykka.ActorRef[Any] = actor.actor_ref
        # Held only until the Down: the wrappers are then removed, and the cycle with them.
        self.actor: pykka.Actor | None = actor
        # The originals are kept as plain functions (None: the class's own), not bound methods:
        # four bound methods would cost ~260 bytes on every monitored actor.
        attrs = actor.__dict__
        self.original_on_failure = attrs.get("on_failure")
        stopped: Any = actor.actor_stopped
        self.event = stopped
        self.original_set = getattr(stopped, "__dict__", {}).get("set")
        self.original_stop, self.original_failure = compat.wrap_exits(
            actor, self.stop, self.handle_failure
        )
        attrs["on_failure"] = self.on_failure
        # An event without a __dict__ gets no backstop; the wrappers still work.
        with contextlib.suppress(TypeError):
            vars(stopped)["set"] = self.set

    # -- the wrappers, called in the actor's own thread -----------------------------------

    def stop(self) -> None:
        self.entered = True
        killed = _escaping_base_exception()
        try:
            compat.call_stop(self.actor, self.original_stop)
        except BaseException as exc:
            self.finish("crash", exc)
            raise
        self.finish("crash" if killed else "normal", killed)

    def handle_failure(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.entered = True
        try:
            compat.call_handle_failure(
                self.actor, self.original_failure, exc_type, exc_value, traceback
            )
        finally:
            if (
                exc_value is not None
                and self.pending is None
                and compat.raised_by_handler(exc_value)
            ):
                # A message handler raised: Pykka's contract calls on_failure next, and the
                # Down waits for it, so a replacement never overlaps the old instance's
                # clean-up (as OTP's EXIT comes after terminate/2).
                self.pending = exc_value
            else:
                self.finish("crash", exc_value)

    def on_failure(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            self._original(self.actor, "on_failure", self.original_on_failure)(
                exc_type, exc_value, traceback
            )
        finally:
            if self.pending is not None:
                self.finish("crash", self.pending)

    def set(self) -> None:
        self._original(self.event, "set", self.original_set)()
        if not self.entered:
            # Stopping began before the wrappers were in place: report now, reading the
            # reason from the exception being handled, if any.
            self.entered = True
            exception = sys.exc_info()[1]
            self.finish("normal" if exception is None else "crash", exception)

    @staticmethod
    def _original(obj: Any, name: str, stored: Any) -> Callable[..., Any]:
        """Return ``obj.name`` as it was before wrapping: an instance override, or the class's."""
        if stored is not None:
            return stored  # type: ignore[no-any-return]
        method: Callable[..., Any] = getattr(type(obj), name).__get__(obj)
        return method

    # -- the end ------------------------------------------------------------------------

    def finish(self, reason: DownReason, exception: BaseException | None) -> None:
        """Record how the actor ended and notify every monitor, the first time only."""
        with self.delivering:
            with self.lock:
                if self.down is not None:
                    return
                down = self.down = Down(self.ref, reason, exception)
                callbacks = list(self.callbacks.values())
                self.callbacks.clear()
            self._unwrap()
            for callback in callbacks:
                _deliver(callback, down)

    def _unwrap(self) -> None:
        actor, self.actor = self.actor, None
        if actor is None:
            return
        compat.unwrap_exits(actor, self.stop, self.handle_failure)
        attrs = actor.__dict__
        if attrs.get("on_failure") == self.on_failure:
            del attrs["on_failure"]
        stopped: Any = actor.actor_stopped
        with contextlib.suppress(TypeError):
            if vars(stopped).get("set") == self.set:
                del vars(stopped)["set"]


def _watch_of(actor: pykka.Actor) -> _Watch:
    watch: _Watch | None = actor.__dict__.get(_WATCH)
    if watch is not None:
        return watch
    with _install_lock:
        watch = actor.__dict__.get(_WATCH)
        if watch is None:
            watch = actor.__dict__[_WATCH] = _Watch(actor)
    return watch


def _escaping_base_exception() -> BaseException | None:
    """Return the non-``Exception`` being handled, if Pykka is stopping because of one."""
    exception = sys.exc_info()[1]
    return exception if exception is not None and not isinstance(exception, Exception) else None


def _deliver(callback: Callable[[Down], None], down: Down) -> None:
    try:
        callback(down)
    except Exception as exc:
        logger.error(
            "monitor_callback_failed", actor=str(down.ref), reason=down.reason, error=repr(exc)
        )
