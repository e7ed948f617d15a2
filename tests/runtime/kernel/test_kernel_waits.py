"""The kernel's checks of waits and deadlines, alone: what the clock can hold is kept, the
rest refused RUNTIME_INVALID_INPUT (never OverflowError deep in a call)."""

from __future__ import annotations

import math

import pytest

from praxo_actors import PraxoError
from praxo_actors.runtime._kernel._waits import MAX_SECONDS, check_deadline, check_timeout


@pytest.mark.parametrize("value", [0, 0.0, 1, 2.5, MAX_SECONDS])
def test_a_timeout_the_clock_can_wait_is_kept(value: float) -> None:
    """Zero and any finite number of seconds up to the clock's maximum are waits."""
    check_timeout(value)


@pytest.mark.parametrize(
    "value", [None, True, "1", -1e-9, math.inf, -math.inf, math.nan, MAX_SECONDS * 2]
)
def test_a_timeout_the_clock_cannot_wait_is_refused(value: object) -> None:
    """None (unless allowed), a bool, a string, a negative, infinite, NaN or too large value
    is refused with a code, and the message names the value."""
    with pytest.raises(PraxoError) as info:
        check_timeout(value)
    assert info.value.code == "RUNTIME_INVALID_INPUT"
    assert repr(value) in str(info.value)


def test_none_and_zero_are_the_callers_choice() -> None:
    """``none=True`` allows None (wait as long as it takes); ``zero=False`` refuses 0."""
    check_timeout(None, none=True)
    with pytest.raises(PraxoError, match="> 0"):
        check_timeout(0, zero=False)


def test_a_deadline_is_a_time_on_the_same_clock() -> None:
    """A deadline in seconds becomes a time in ns from ``now_ns``."""
    assert check_deadline(1.5, 1_000) == 1_000 + 1_500_000_000
    assert check_deadline(0, 7) == 7


@pytest.mark.parametrize("value", [True, -1, math.inf, math.nan, MAX_SECONDS * 2])
def test_a_deadline_the_clock_cannot_hold_is_refused(value: object) -> None:
    """A deadline that is not a finite number of seconds >= 0 is refused with a code."""
    with pytest.raises(PraxoError) as info:
        check_deadline(value, 0)
    assert info.value.code == "RUNTIME_INVALID_INPUT"


def test_a_deadline_past_the_ns_range_is_refused() -> None:
    """A deadline that fits the seconds bound but not a 64-bit count of ns from ``now_ns``
    is refused, not wrapped or overflowed."""
    now_ns = 2**63 - 10**9
    assert check_deadline(0.5, now_ns) == now_ns + 500_000_000
    with pytest.raises(PraxoError) as info:
        check_deadline(2.0, now_ns)
    assert info.value.code == "RUNTIME_INVALID_INPUT"
