"""Reconnection delays: at once, then doubling with jitter up to a cap."""

from __future__ import annotations

import pytest

from praxo_actors.memory._backoff import Backoff
from supervisors import ManualClock


def test_backoff_tries_at_once_then_doubles_up_to_its_cap() -> None:
    """The first attempt after a loss is immediate; then delays double from ``initial`` to the
    cap, each jittered down by at most half; a success resets them."""
    clock = ManualClock()
    highs = Backoff(0.05, 1.0, monotonic=clock, jitter=lambda: 0.0)
    lows = Backoff(0.05, 1.0, monotonic=clock, jitter=lambda: 0.999999)
    assert highs.remaining() == 0.0
    full = [highs.failed() for _ in range(8)]
    assert full == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0])
    least = [lows.failed() for _ in range(8)]
    assert least == pytest.approx([d / 2 for d in full], rel=1e-5)
    assert highs.remaining() == pytest.approx(1.0)
    clock.advance(0.6)
    assert highs.remaining() == pytest.approx(0.4)
    clock.advance(0.4)
    assert highs.remaining() == 0.0
    highs.succeeded()
    assert highs.failures == 0
    assert highs.failed() == pytest.approx(0.05)


def test_backoff_stays_capped_after_many_failures() -> None:
    """Ten thousand failures in a row still wait at most the cap (no float overflow)."""
    backoff = Backoff(0.05, 2.0, monotonic=ManualClock())
    delays = [backoff.failed() for _ in range(10_000)]
    assert max(delays) <= 2.0
    assert min(delays[-100:]) >= 1.0


def test_backoff_refuses_a_cap_below_its_first_delay() -> None:
    """``maximum < initial`` is a mistake, refused with ``ValueError``."""
    with pytest.raises(ValueError):
        Backoff(1.0, 0.5)
