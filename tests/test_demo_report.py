"""The demo's summary says what its latency measures: model time and time waiting in the runtime."""

from __future__ import annotations

from praxo_actors._demo import DemoReport as ReExported
from praxo_actors._demo_report import DemoReport


def report() -> DemoReport:
    """Four runs of ~150 ms of model time that took 0.8 s to 1.1 s each, 2 runs/s."""
    done = DemoReport(runs_total=4, sessions=2, completed=4, elapsed=2.0, concurrency=2)
    done.latencies = [0.8, 0.9, 1.0, 1.1]
    done.model_times = [0.15, 0.14, 0.16, 0.15]
    return done


def test_the_summary_splits_latency_into_model_time_and_waiting() -> None:
    rows = dict(report().rows())
    assert rows["latency p50"] == "1000.0 ms"
    assert rows["model time p50"] == "150.0 ms"
    assert rows["waiting p50"] == "840.0 ms"  # the third run: 1.0 s - 0.16 s
    assert rows["waiting p99"] == "950.0 ms"
    labels = [label for label, _ in report().rows()]
    assert labels.index("latency p99") < labels.index("model time p50") < labels.index("completed")


def test_the_notes_say_latency_is_mostly_queueing_and_why() -> None:
    first, second = report().notes()
    assert first.startswith("latency: from submitting a run to its outcome")
    assert "waiting: the rest, time queued in the runtime" in first
    assert second.startswith("2 sessions run at once (--concurrency), so each run waits behind")
    assert "2 / 2.0 = 1000.0 ms each (Little's law)" in second


def test_without_measurements_there_is_nothing_to_explain() -> None:
    empty = DemoReport(runs_total=0)
    assert empty.notes() == []
    assert "model time p50" not in dict(empty.rows())
    one_at_a_time = report()
    one_at_a_time.concurrency = 1
    assert len(one_at_a_time.notes()) == 1  # no queue behind other sessions to explain


def test_the_report_is_still_importable_from_the_demo_module() -> None:
    assert ReExported is DemoReport
