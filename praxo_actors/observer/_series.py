"""The counters over the last 15 minutes, in 10-second steps, for the page's charts.

Runs that end and their latencies are counted into the step of their end event's time; the
live-session count is sampled whenever ``/api/state`` reads the runtime's statistics. Each
step keeps at most ``_SAMPLES`` latencies (p50/p99 of a busier step are over its first ones),
so the series is bounded: 90 steps.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

__all__ = ["STEP_S", "WINDOW_S", "Series"]

STEP_S = 10
WINDOW_S = 15 * 60
_STEPS = WINDOW_S // STEP_S
_SAMPLES = 2000


class _Step:
    __slots__ = ("failures", "latencies", "live", "runs")

    def __init__(self) -> None:
        self.runs = 0
        self.failures = 0
        self.latencies: list[float] = []
        self.live: int | None = None


class Series:
    """Per-step counts of ended runs, failures, latencies and live sessions (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: dict[int, _Step] = {}

    def _step(self, at_s: float) -> _Step:
        index = int(at_s // STEP_S)
        step = self._steps.get(index)
        if step is None:
            step = self._steps[index] = _Step()
            for old in [i for i in self._steps if i <= index - _STEPS]:
                del self._steps[old]
        return step

    def ended(self, at_ns: int, failed: bool, latency_ms: float | None) -> None:
        """Count a run that ended at ``at_ns`` (wall clock), with its latency if known."""
        with self._lock:
            step = self._step(at_ns / 1e9)
            step.runs += 1
            step.failures += failed
            if latency_ms is not None and len(step.latencies) < _SAMPLES:
                step.latencies.append(latency_ms)

    def sample_live(self, live_sessions: int, at_s: float | None = None) -> None:
        """Record the live-session count now (the latest sample of a step wins)."""
        with self._lock:
            self._step(time.time() if at_s is None else at_s).live = live_sessions

    def points(self, now_s: float | None = None) -> dict[str, Any]:
        """Return ``{"step_s", "points": [...]}``: the last 15 minutes, oldest first, one point
        per step (``t`` its start, epoch seconds; rates per second; quantiles in ms or None)."""
        now = time.time() if now_s is None else now_s
        last = int(now // STEP_S)
        points = []
        with self._lock:
            for index in range(last - _STEPS + 1, last + 1):
                step = self._steps.get(index)
                ordered = sorted(step.latencies) if step is not None else []
                points.append(
                    {
                        "t": index * STEP_S,
                        "live_sessions": None if step is None else step.live,
                        "runs_per_s": 0.0 if step is None else step.runs / STEP_S,
                        "failures_per_s": 0.0 if step is None else step.failures / STEP_S,
                        "p50": _quantile(ordered, 0.50),
                        "p99": _quantile(ordered, 0.99),
                    }
                )
        return {"step_s": STEP_S, "points": points}


def _quantile(ordered: list[float], q: float) -> float | None:
    if not ordered:
        return None
    return round(ordered[max(1, math.ceil(q * len(ordered))) - 1], 3)
