"""Checks of the seconds callers give to wait (timeouts) and to run (deadlines).

A wait is refused, not attempted, when the clock cannot hold it: ``threading`` waits at most
``threading.TIMEOUT_MAX`` seconds (about 292 years on 64-bit Linux) and a deadline is kept in
nanoseconds in a 64-bit int; past either, Python raises ``OverflowError`` deep inside a call.
"""

from __future__ import annotations

import math
import threading

from praxo_actors._errors import PraxoError
from praxo_actors.codes import RUNTIME_INVALID_INPUT

__all__ = ["MAX_SECONDS", "check_deadline", "check_timeout"]

MAX_SECONDS = float(threading.TIMEOUT_MAX)
_MAX_NS = 2**63 - 1


def check_timeout(timeout: object, *, none: bool = False, zero: bool = True) -> None:
    """Refuse a timeout that is not a finite number of seconds the clock can wait.

    Args:
        timeout: The value given.
        none: Whether None (wait as long as it takes) is allowed.
        zero: Whether 0 (do not wait) is allowed.

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT``.
    """
    if timeout is None and none:
        return
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout < 0
        or (timeout == 0 and not zero)
        or timeout > MAX_SECONDS
    ):
        least = ">= 0" if zero else "> 0"
        raise PraxoError(
            RUNTIME_INVALID_INPUT,
            f"timeout must be a finite number of seconds {least} and <= {MAX_SECONDS:.0f}"
            + (" or None" if none else "")
            + f", got {timeout!r}",
        )


def check_deadline(deadline: object, now_ns: int) -> int:
    """Return a deadline in seconds from ``now_ns`` as a time in ns on the same clock.

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a deadline that is not a finite number of
            seconds >= 0 the clock can hold.
    """
    if (
        isinstance(deadline, bool)
        or not isinstance(deadline, int | float)
        or not math.isfinite(deadline)
        or deadline < 0
        or deadline > MAX_SECONDS
        or now_ns + int(deadline * 1e9) > _MAX_NS
    ):
        raise PraxoError(
            RUNTIME_INVALID_INPUT,
            f"deadline must be a finite number of seconds >= 0 and <= {MAX_SECONDS:.0f}, "
            f"got {deadline!r}",
        )
    return now_ns + int(deadline * 1e9)
