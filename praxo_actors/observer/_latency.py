"""Run latency as the event stream shows it: ``run.started`` paired with its run's end.

A run's latency here is the time from its ``run.started`` event (the session begins the run)
to its ``run.completed`` or ``run.failed`` event, both stamped by the same clock. Time spent
queued behind another run of the session is not in it; runs that fail before they start (a
refused or crashed run) have no ``run.started`` and are not counted.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, deque
from typing import Any

from praxo_actors.models import Event

__all__ = ["BUCKETS_MS", "Latency"]

BUCKETS_MS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000)
"""Upper bounds (ms) of the histogram's buckets; a last, open bucket holds the rest."""

_ENDS = frozenset({"run.completed", "run.failed"})


class Latency:
    """Pairs run events into latencies: a histogram since start and quantiles of the last runs.

    Called with each ``run.*`` event on an event delivery thread; read from any thread.

    Args:
        window: How many of the latest runs the quantiles are taken over.
        max_open: Runs started and not yet ended that are remembered (the oldest are forgotten
            beyond this, so a stream of runs that never end cannot grow it).
    """

    def __init__(self, window: int = 2000, max_open: int = 100_000) -> None:
        self._lock = threading.Lock()
        self._open: OrderedDict[str, int] = OrderedDict()
        self._max_open = max_open
        self._recent: deque[float] = deque(maxlen=window)
        self._counts = [0] * (len(BUCKETS_MS) + 1)
        self._total = 0

    def __call__(self, event: Event) -> None:
        """Take one event (others than ``run.started`` and the run's end are ignored)."""
        kind = event.type
        with self._lock:
            if kind == "run.started":
                self._open[event.run_id] = event.time_ns
                if len(self._open) > self._max_open:
                    self._open.popitem(last=False)
            elif kind in _ENDS:
                started = self._open.pop(event.run_id, None)
                if started is not None:
                    self._add(max(0, event.time_ns - started) / 1e6)

    def _add(self, ms: float) -> None:
        self._recent.append(ms)
        self._total += 1
        for index, bound in enumerate(BUCKETS_MS):
            if ms <= bound:
                self._counts[index] += 1
                return
        self._counts[-1] += 1

    def snapshot(self) -> dict[str, Any]:
        """Return ``{"p50", "p99", "count", "buckets"}``: the quantiles (ms, None before any
        run) over the latest runs, the runs measured, and ``[upper bound ms or None, count]``
        per histogram bucket."""
        with self._lock:
            recent = sorted(self._recent)
            counts = list(self._counts)
            total = self._total
        bounds: list[int | None] = [*BUCKETS_MS, None]
        return {
            "p50": _quantile(recent, 0.50),
            "p99": _quantile(recent, 0.99),
            "count": total,
            "buckets": [[bound, n] for bound, n in zip(bounds, counts, strict=True)],
        }


def _quantile(ordered: list[float], q: float) -> float | None:
    """Return the nearest-rank ``q`` quantile of ``ordered`` (None when it is empty)."""
    if not ordered:
        return None
    rank = max(1, math.ceil(q * len(ordered)))
    return round(ordered[rank - 1], 3)
