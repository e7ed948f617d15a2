"""One bounded wait for a condition that other threads make true: :func:`eventually`.

A test that waits for another thread (a runtime's loop, a server, a child process) polls a
predicate here instead of writing its own loop: every wait is bounded, and one that times out
says what it waited for and the last value (or error) the predicate gave.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["EVENTUALLY_TIMEOUT", "eventually"]

T = TypeVar("T")

EVENTUALLY_TIMEOUT = 10.0
"""Seconds :func:`eventually` waits unless told otherwise."""


def eventually(
    predicate: Callable[[], T],
    *,
    timeout: float = EVENTUALLY_TIMEOUT,
    interval: float = 0.01,
    what: str | None = None,
) -> T:
    """Call ``predicate`` until it returns a true value, and return that value.

    An ``AssertionError`` the predicate raises counts as "not yet" (a predicate may assert);
    any other error propagates at once (``pytest.fail`` in a predicate ends the wait now).

    Args:
        predicate: The condition, read again every ``interval`` seconds.
        timeout: Seconds (monotonic) to wait at most.
        interval: Seconds between two readings.
        what: Says what is awaited, for the failure message (the predicate's name otherwise).

    Raises:
        AssertionError: The predicate gave no true value within ``timeout`` seconds; the
            message holds its last value or error.
    """
    pause = threading.Event()  # never set: a bounded pause between readings
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except AssertionError as exc:
            last = f"AssertionError: {exc}"
        else:
            if value:
                return value
            last = repr(value)
        if time.monotonic() >= deadline:
            name = what or _describe(predicate)
            raise AssertionError(f"{name}: not within {timeout} s (last: {last[:500]})")
        pause.wait(interval)


def _describe(predicate: Callable[[], object]) -> str:
    name = getattr(predicate, "__qualname__", repr(predicate))
    if name.endswith("<lambda>"):
        try:
            return inspect.getsource(predicate).strip()
        except (OSError, TypeError):
            pass
    return str(name)
