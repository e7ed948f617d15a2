"""Debug checks of who owns what: off in production, on in the test suite.

Two kinds, both free when off:

- **Thread ownership.** A class decorated with :func:`loop_owned` says that its public methods run
  on one thread (its owner's loop, set per object with :func:`set_owner`); a method decorated
  with :func:`any_thread` is an entry that other threads may call. While the checks are on,
  every other public method asserts the calling thread, as trio's runner asserts its thread.
  The wrapping is installed by :func:`enable` and removed by disabling: with the checks off, a
  method call costs what it always did.
- **State invariants.** An owner checks its state at points it chooses (the loop scheduler after
  every drain) when :func:`enabled`; a broken invariant is reported with :func:`violation`.

Violations are logged and kept: a test suite takes them with :func:`take_violations` after each
test and fails the test that caused one (a check raised inside a loop callback or an actor would
be logged and swallowed, never seen by the test). A wrong thread also raises
``AssertionError`` in the caller: the call must not go on mutating state it does not own.

Turn the checks on with ``PRAXO_DEBUG_CHECKS=1`` in the environment or ``enable()``.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from praxo_actors._log import get_logger

__all__ = [
    "any_thread",
    "enable",
    "enabled",
    "loop_owned",
    "set_owner",
    "take_violations",
    "violation",
]

logger = get_logger("praxo_actors.actors")

C = TypeVar("C", bound=type)
F = TypeVar("F", bound=Callable[..., Any])

_OWNER = "_checks_owner_thread"
_ANY = "__any_thread__"

_on = False
ON = False
"""Whether the debug checks are on (as :func:`enabled`, without a call)."""
_owned: list[type] = []
# class -> {method name: the original function}, while the checks are on.
_wrapped: dict[type, dict[str, Callable[..., Any]]] = {}
_violations: list[str] = []
_violations_lock = threading.Lock()


def enabled() -> bool:
    """Return whether the debug checks are on (also :data:`ON`, for a hot path to read)."""
    return _on


def enable(on: bool = True) -> None:
    """Turn the debug checks on (or off): wrap (or unwrap) every loop-owned class's methods."""
    global _on, ON
    if on == _on:
        return
    _on = ON = on
    for cls in _owned:
        if on:
            _wrap(cls)
        else:
            _unwrap(cls)


def violation(message: str) -> None:
    """Report a broken ownership rule or invariant (logged, and kept for the test suite)."""
    logger.error("debug_check_failed", problem=message)
    with _violations_lock:
        _violations.append(message)


def take_violations() -> list[str]:
    """Return the violations reported since the last call, and forget them."""
    with _violations_lock:
        taken = list(_violations)
        _violations.clear()
    return taken


def any_thread(fn: F) -> F:
    """Mark a public method of a :func:`loop_owned` class as callable from any thread."""
    setattr(fn, _ANY, True)
    return fn


def loop_owned(cls: C) -> C:
    """Declare that ``cls``'s public methods run on its owner's thread (see :func:`set_owner`)."""
    _owned.append(cls)
    if _on:
        _wrap(cls)
    return cls


def set_owner(obj: object, thread_id: int | None) -> None:
    """Name the thread (``threading.get_ident()``) that owns ``obj``; ``None``: no owner (no
    check), as before the first call."""
    setattr(obj, _OWNER, thread_id)


def _entries(cls: type) -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}
    for name, value in vars(cls).items():
        if name.startswith("_") or not inspect.isfunction(value) or getattr(value, _ANY, False):
            continue
        found[name] = value
    return found


def _wrap(cls: type) -> None:
    originals = _entries(cls)
    for name, fn in originals.items():
        setattr(cls, name, _checked(cls, fn))
    _wrapped[cls] = originals


def _unwrap(cls: type) -> None:
    for name, fn in _wrapped.pop(cls, {}).items():
        setattr(cls, name, fn)


def _checked(cls: type, fn: Callable[..., Any]) -> Callable[..., Any]:
    where = f"{cls.__name__}.{fn.__name__}"

    @functools.wraps(fn)
    def check(self: Any, *args: Any, **kwargs: Any) -> Any:
        owner = getattr(self, _OWNER, None)
        if owner is not None and threading.get_ident() != owner:
            message = (
                f"{where} called on thread {threading.current_thread().name!r}, not its loop's"
            )
            violation(message)
            raise AssertionError(message)
        return fn(self, *args, **kwargs)

    return check


if os.environ.get("PRAXO_DEBUG_CHECKS") == "1":
    enable()
