"""What a watched actor carries: its exits wrapped (or reported), its monitors' callbacks, its Down.

:mod:`supervisors._monitor` sets monitors up on top of this.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

import msgspec
import pykka

from supervisors import _pykka_compat as compat
from supervisors._log import get_logger

__all__ = ["Down", "DownReason"]
logger = get_logger("supervisors")
DownReason = Literal["normal", "crash", "noproc"]
# Why these hook points. Pykka 4.5 has no links or monitors, and an actor ends through one of
# two exits of the lifecycle contract that every actor kind keeps (see supervisors._pykka_compat):
# wrapping both on the *instance* catches every end for any actor class, costs no thread per
# actor (10,000 children stay cheap), and tells a normal stop from a crash. `on_failure` is
# wrapped so that a handler's crash is reported after it, and `actor_stopped.set` only as a
# backstop for an actor that was already inside an unwrapped exit when the monitor was set up.
# An actor kind built on compat.ExitHooks reports its exits itself, at class level: nothing is
# wrapped on its instances, so watching one costs a single object (its _Watch).
_WATCH = "_supervisors_watch"
# Guards every watch's state and the callback table. Held only for a few dict operations, never
# while calling out, so one lock for every actor costs less than one per actor (two objects
# each for the collector) and cannot deadlock.
_lock = threading.Lock()
# The callbacks the collector tracks (a function, a bound method, a closure), keyed by
# _slot(their watch's serial, their key): kept in a watch, one would make it tracked. One int of
# two 30-bit digits (32 bytes), not a (serial, key) tuple (64 bytes and its ints). The callbacks
# of an actor's first two monitors (keys 0 and 1), when the collector does not track them (the
# untracked records the sessions supervisor and a Registry watch with), are kept in the watch
# itself: 16 bytes for both, where a table slot and its key cost ~100-130 bytes each.
_callbacks: dict[int | tuple[int, int], Callable[[Down], None]] = {}
_serials = itertools.count()
_KEY_BITS = 32
_KEY_LIMIT = 1 << _KEY_BITS
_FEW = 8  # a watch with at most this many keys in use looks for its callbacks in the table


def _slot(serial: int, key: int) -> int | tuple[int, int]:
    # Past 2**32 monitors on one actor the key is a tuple, which no int slot equals.
    return (serial << _KEY_BITS) | key if key < _KEY_LIMIT else (serial, key)


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


class _Watch(msgspec.Struct):
    """The monitors of one actor, the wrappers that report its end, and the ``Down``.

    A Struct whose fields are only numbers, None and untracked callbacks while an
    ``ExitHooks`` actor runs: the collector does not track it until the actor ends (it then
    holds the ``Down``) or something waits on it, so watching such an actor adds no object for
    the collector to walk.
    """

    serial: int = -1  # numbered when it first puts a callback in the table (an int less)
    down: Down | None = None
    entered: bool = False  # the actor has begun to stop through an exit
    pending: BaseException | None = None  # a crash whose on_failure is to come
    next_key: int = 0
    low: int = 0  # no live key is below this one
    delivering: int | None = None  # the thread delivering the Down, while it does
    waiter: threading.Event | None = None  # made only for a noproc that must wait
    # Set when the actor ends, for an ExitHooks actor (holding it sooner would track this).
    ref: pykka.ActorRef[Any] | None = None
    # What wrapping a plain Pykka actor's exits keeps; None for an ExitHooks actor, whose
    # watch is then 40 bytes smaller than one with the six fields inline.
    wrapping: _Wrapping | None = None
    # The untracked callbacks of the monitors with keys 0 and 1 (None: in the table, or none).
    first: Any = None
    second: Any = None

    @classmethod
    def of(cls, actor: pykka.Actor) -> _Watch:
        """Make the watch of ``actor``, wrapping its exits unless it reports them itself."""
        watch = cls()
        if isinstance(actor, compat.ExitHooks):
            return watch
        watch.ref = actor.actor_ref
        # The actor is held only until the Down: the wrappers are then removed, and the cycle
        # with them.
        stopped: Any = actor.actor_stopped
        wrapping = watch.wrapping = _Wrapping(actor, stopped)
        # The originals are kept as plain functions (None: the class's own), not bound methods:
        # four bound methods would cost ~260 bytes on every monitored actor.
        attrs = actor.__dict__
        wrapping.on_failure = attrs.get("on_failure")
        wrapping.set = getattr(stopped, "__dict__", {}).get("set")
        wrapping.stop, wrapping.failure = compat.wrap_exits(actor, watch.stop, watch.handle_failure)
        attrs["on_failure"] = watch.on_failure
        # An event without a __dict__ gets no backstop; the wrappers still work.
        with contextlib.suppress(TypeError):
            vars(stopped)["set"] = watch.set
        return watch

    # -- the callbacks (in the watch or the table) ----------------------------------------

    def put_locked(self, key: int, callback: Callable[[Down], None]) -> None:
        """Keep the callback of the monitor ``key`` (the caller holds ``_lock``)."""
        if key < 2 and not gc.is_tracked(callback):
            if key == 0:
                self.first = callback
            else:
                self.second = callback
            return
        if self.serial < 0:
            self.serial = next(_serials)
        _callbacks[_slot(self.serial, key)] = callback

    def _take_locked(self, key: int) -> Callable[[Down], None] | None:
        if key == 0 and self.first is not None:
            callback, self.first = self.first, None
            return callback  # type: ignore[no-any-return]
        if key == 1 and self.second is not None:
            callback, self.second = self.second, None
            return callback  # type: ignore[no-any-return]
        if self.serial < 0:
            return None
        return _callbacks.pop(_slot(self.serial, key), None)

    def _has_locked(self, key: int) -> bool:
        if (key == 0 and self.first is not None) or (key == 1 and self.second is not None):
            return True
        return self.serial >= 0 and _slot(self.serial, key) in _callbacks

    def _unnumber_locked(self) -> None:
        # A watch whose few callbacks are all in itself again (a supervisor's tracked one,
        # handed over to its untracked shared one) lets its number go: an int less.
        serial = self.serial
        if serial < 0 or self.next_key - self.low > _FEW:
            return
        if not any(_slot(serial, k) in _callbacks for k in range(self.low, self.next_key)):
            self.serial = -1

    def cancel(self, key: int) -> bool:
        """Drop the monitor ``key``; return whether its ``Down`` was still to come."""
        with _lock:
            found = self._take_locked(key) is not None
            while self.low < self.next_key and not self._has_locked(self.low):
                self.low += 1
            self._unnumber_locked()
        return found

    def rebind(self, key: int, callback: Callable[[Down], None]) -> bool:
        """Give the monitor ``key`` another callback; False if its ``Down`` is on its way."""
        with _lock:
            if self._take_locked(key) is None:
                return False
            self.put_locked(key, callback)
            self._unnumber_locked()
        return True

    # -- the wrappers, called in the actor's own thread -----------------------------------

    def stop(self) -> None:
        wrapping = self._wrapping()
        self.stop_through(lambda: compat.call_stop(wrapping.actor, wrapping.stop))

    def stop_through(self, original: Callable[[], None]) -> None:
        self.entered = True
        killed = _escaping_base_exception()
        try:
            original()
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
        wrapping = self._wrapping()
        self.fail_through(
            lambda: compat.call_handle_failure(
                wrapping.actor, wrapping.failure, exc_type, exc_value, traceback
            ),
            exc_value,
        )

    def fail_through(self, original: Callable[[], None], exc_value: BaseException | None) -> None:
        self.entered = True
        try:
            original()
        finally:
            if self.pending is not None:
                self.finish("crash", self.pending)  # on_failure raised in its turn
            elif exc_value is not None and compat.raised_by_handler(exc_value):
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
        wrapping = self._wrapping()
        try:
            self._original(wrapping.actor, "on_failure", wrapping.on_failure)(
                exc_type, exc_value, traceback
            )
        finally:
            self.failure_handled()

    def failure_handled(self) -> None:
        """``on_failure`` has run: deliver the Down of the handler's crash that waited for it."""
        if self.pending is not None:
            self.finish("crash", self.pending)

    def set(self) -> None:
        wrapping = self._wrapping()
        self._original(wrapping.event, "set", wrapping.set)()
        self.stopped()

    def stopped(self) -> None:
        """The actor's stop event was set: report the end, if no exit reported it."""
        with _lock:
            if self.entered:
                return
            # Stopping began before the wrappers were in place (or outside the exits): report
            # now, reading the reason from the exception being handled, if any.
            self.entered = True
        exception = sys.exc_info()[1]
        self.finish("normal" if exception is None else "crash", exception)

    def _wrapping(self) -> _Wrapping:
        # Only the wrappers call this, and they are installed only with a _Wrapping.
        wrapping = self.wrapping
        assert wrapping is not None
        return wrapping

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
        with _lock:
            if self.down is not None:
                return
            assert self.ref is not None  # set when the watch was made, or when the actor ended
            down = self.down = Down(self.ref, reason, exception)
            callbacks = [
                callback
                for key in range(self.low, self.next_key)
                if (callback := self._take_locked(key)) is not None
            ]
            self.low = self.next_key
            self.delivering = threading.get_ident()
        try:
            self._unwrap()
            for callback in callbacks:
                _deliver(callback, down)
        finally:
            with _lock:
                self.delivering = None
                waiter, self.waiter = self.waiter, None
            if waiter is not None:
                waiter.set()

    def _unwrap(self) -> None:
        wrapping = self.wrapping
        if wrapping is None or wrapping.actor is None:
            return
        actor, wrapping.actor = wrapping.actor, None
        compat.unwrap_exits(actor, self.stop, self.handle_failure)
        attrs = actor.__dict__
        if attrs.get("on_failure") == self.on_failure:
            del attrs["on_failure"]
        stopped: Any = actor.actor_stopped
        with contextlib.suppress(TypeError):
            if vars(stopped).get("set") == self.set:
                del vars(stopped)["set"]


class _Wrapping(msgspec.Struct):
    """The wrapped actor (until its Down) and the originals its wrappers call.

    The originals are plain functions (None: the class's own), not bound methods.
    """

    actor: pykka.Actor | None
    event: Any
    on_failure: Any = None
    set: Any = None
    stop: Any = None
    failure: Any = None


def _watch_of_locked(actor: pykka.Actor) -> _Watch:
    # getattr/setattr, not actor.__dict__: reading __dict__ would make the instance's dict an
    # object of its own (one more for the collector on every watched actor).
    watch: _Watch | None = getattr(actor, _WATCH, None)
    if watch is None:
        watch = _Watch.of(actor)
        setattr(actor, _WATCH, watch)
    return watch


class _Exits:
    """What an ``ExitHooks`` actor reports, on its own thread (see ``compat.ExitHooks``)."""

    @staticmethod
    def stop(actor: pykka.Actor, original: Callable[[], None]) -> None:
        _entered(actor).stop_through(original)

    @staticmethod
    def handle_failure(
        actor: pykka.Actor, original: Callable[[], None], exc_value: BaseException | None
    ) -> None:
        _entered(actor).fail_through(original, exc_value)

    @staticmethod
    def loop_ended(actor: pykka.Actor) -> None:
        watch: _Watch | None = getattr(actor, _WATCH, None)
        if watch is not None:
            watch.failure_handled()

    @staticmethod
    def stopped(actor: pykka.Actor) -> None:
        with _lock:
            watch = _watch_of_locked(actor)
            watch.ref = actor.actor_ref
        watch.stopped()


def _entered(actor: pykka.Actor) -> _Watch:
    # Made here if no monitor made it: a monitor set up while the actor stops then finds the
    # exit under way (entered) and gets its Down, instead of missing it.
    with _lock:
        watch = _watch_of_locked(actor)
        watch.entered = True
        watch.ref = actor.actor_ref
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
