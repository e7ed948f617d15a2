"""The event-subscriber example's actor counts each session's runs from ``run.*`` events."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

from praxo_actors import PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.runtime import Runtime

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "event_subscriber.py"
TIMEOUT = 5.0


@pytest.fixture
def example() -> dict[str, Any]:
    """Load the example module's names without running its ``main``."""
    return runpy.run_path(str(EXAMPLE))


def test_main_prints_the_counts(
    example: dict[str, Any], no_thread_leaks: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example's main counts started, completed and failed runs per session."""
    counts = example["main"]()
    assert counts == {
        "alice": {"started": 3, "completed": 2, "failed": 1},
        "bob": {"started": 1, "completed": 1},
        "carol": {"started": 1, "failed": 1},
    }
    out = capsys.readouterr().out
    assert "carol: failed with MODEL_UNAVAILABLE" in out
    assert "failure codes: {'MODEL_UNAVAILABLE': 2}" in out


def test_the_counter_tracks_many_sessions(example: dict[str, Any], no_thread_leaks: None) -> None:
    """Subscribed to ``run.*``, the actor counts every run of every session, and nothing else."""
    runtime = Runtime.start()
    counter = example["RunCounter"].start()
    try:
        runtime.register_agent("echo", lambda: new_agent_options(example["model"]))
        subscription = runtime.events.subscribe(counter, pattern="run.*")
        futures = [
            runtime.session(f"s{i}", "echo").run("fail" if (i + k) % 3 == 0 else f"msg {k}")
            for i in range(10)
            for k in range(3)
        ]
        outcomes = []
        for future in futures:
            try:
                future.get(timeout=TIMEOUT)
                outcomes.append("completed")
            except PraxoError:
                outcomes.append("failed")
        proxy = counter.proxy()
        assert proxy.ended(30).get(timeout=TIMEOUT).get(timeout=TIMEOUT) == 30
        counts = proxy.counts().get(timeout=TIMEOUT)
        for i in range(10):
            mine = outcomes[i * 3 : i * 3 + 3]
            expected = {"started": 3} | {k: mine.count(k) for k in set(mine)}
            assert counts[f"s{i}"] == expected
        assert proxy.codes().get(timeout=TIMEOUT) == {"MODEL_UNAVAILABLE": 10}
        assert subscription.statistics().dropped == 0
    finally:
        runtime.stop()
        counter.stop()


def test_a_waiter_for_runs_already_ended_completes_at_once(
    example: dict[str, Any], no_thread_leaks: None
) -> None:
    """``ended(0)`` completes immediately, before any event arrives."""
    counter = example["RunCounter"].start()
    try:
        assert counter.proxy().ended(0).get(timeout=TIMEOUT).get(timeout=TIMEOUT) == 0
    finally:
        counter.stop()
