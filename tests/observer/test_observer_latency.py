"""Run latency from event pairs: quantiles over the latest runs and a histogram since start."""

from __future__ import annotations

from praxo_actors.models import Event
from praxo_actors.observer import BUCKETS_MS, Latency


def event(kind: str, run_id: str, ms: float) -> Event:
    return Event(kind, run_id, "s", 0, int(ms * 1e6), {})


def test_latency_pairs_each_run_start_with_its_end() -> None:
    """A run's latency is its end's time minus its start's; both ends count."""
    latency = Latency()
    for i in range(100):
        latency(event("run.started", f"r{i}", 1000.0))
    for i in range(100):
        latency(event("run.completed" if i % 2 else "run.failed", f"r{i}", 1000.0 + i + 1))
    snapshot = latency.snapshot()
    assert (snapshot["p50"], snapshot["p99"], snapshot["count"]) == (50.0, 99.0, 100)
    counts = dict((bound, n) for bound, n in snapshot["buckets"])
    assert counts[1] == 1 and counts[2] == 1 and counts[5] == 3 and counts[100] == 50
    assert sum(counts.values()) == 100 and list(counts) == [*BUCKETS_MS, None]


def test_events_without_a_pair_and_other_events_are_ignored() -> None:
    """An end without a start, a second end, and other event types measure nothing."""
    latency = Latency()
    latency(event("run.completed", "never-started", 5.0))
    latency(event("model.requested", "r", 1.0))
    latency(event("run.started", "r", 1.0))
    latency(event("run.completed", "r", 3.0))
    latency(event("run.failed", "r", 9.0))
    snapshot = latency.snapshot()
    assert (snapshot["p50"], snapshot["count"]) == (2.0, 1)


def test_quantiles_cover_the_latest_window_and_open_runs_are_bounded() -> None:
    """Quantiles are over the last ``window`` runs; the oldest open runs are forgotten."""
    latency = Latency(window=10, max_open=2)
    for i in range(20):
        latency(event("run.started", f"r{i}", 0.0))
        latency(event("run.completed", f"r{i}", 1000.0 if i < 10 else 1.0))
    assert latency.snapshot()["p99"] == 1.0
    assert latency.snapshot()["buckets"][-1] == [None, 0]
    for run_id in ("a", "b", "c"):
        latency(event("run.started", run_id, 0.0))
    latency(event("run.completed", "a", 1.0))  # forgotten: three were open, two are kept
    latency(event("run.completed", "c", 70_000.0))
    snapshot = latency.snapshot()
    assert snapshot["count"] == 21 and snapshot["buckets"][-1] == [None, 1]


def test_no_runs_means_no_quantiles() -> None:
    """Before any run has ended, p50 and p99 are None."""
    snapshot = Latency().snapshot()
    assert (snapshot["p50"], snapshot["p99"], snapshot["count"]) == (None, None, 0)
