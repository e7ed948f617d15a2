"""The runtime keeps serving while the application's own supervisor restarts its actor."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "supervised_beside.py"
TIMEOUT = 5.0


@pytest.fixture
def example() -> dict[str, Any]:
    """Load the example module's names without running its ``main``."""
    return runpy.run_path(str(EXAMPLE))


pytestmark = pytest.mark.usefixtures("no_thread_leaks")


def test_main_runs_through_a_limiter_crash(
    example: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """The example's main is rate limited, survives the crash, and is served after it."""
    example["main"]()
    out = capsys.readouterr().out
    assert "Paris: sunny." in out
    assert "Sorry, no forecast: RATE_LIMITED." in out
    assert "limiter crashed: restarted by its supervisor" in out
    assert "Kyiv: sunny." in out
    assert "runtime crashes: 0" in out


def test_the_supervisor_restarts_the_limiter_while_the_runtime_serves(
    example: dict[str, Any],
) -> None:
    """A crashed limiter is replaced with a fresh bucket; sessions and their history stay."""
    slot = example["LimiterSlot"](capacity=1)
    app, runtime = example["start_app"](slot)
    try:
        first, other = runtime.session("a", "weather"), runtime.session("b", "weather")
        assert first.run("Paris").get(timeout=TIMEOUT).output == "Paris: sunny."
        assert first.run("Oslo").get(timeout=TIMEOUT).output == "Sorry, no forecast: RATE_LIMITED."
        crashed = slot.current()
        crashed.tell(example["Poison"]())
        # The runtime serves during the restart: the tool reports the gap, the run completes.
        during = other.run("Rome").get(timeout=TIMEOUT).output
        assert during in {"Rome: sunny.", "Sorry, no forecast: LIMITER_UNAVAILABLE."}
        assert slot.wait_started(2, TIMEOUT)
        assert crashed.actor_stopped.wait(TIMEOUT)
        children = app.proxy().which_children().get(timeout=TIMEOUT)
        assert [c.ref for c in children] == [slot.current()]
        assert slot.current() is not crashed
        if during == "Rome: sunny.":  # that lookup took the new bucket's only token
            assert first.run("Kyiv").get(timeout=TIMEOUT).output.endswith("RATE_LIMITED.")
        else:
            assert first.run("Kyiv").get(timeout=TIMEOUT).output == "Kyiv: sunny."
        assert len(first.history()) == 12
        assert runtime.statistics().crashes == 0
    finally:
        runtime.stop()
        app.stop()


def test_the_tool_reports_a_stopped_limiter_as_a_tool_error(example: dict[str, Any]) -> None:
    """With its limiter gone, the lookup tool returns LIMITER_UNAVAILABLE rather than raising."""
    slot = example["LimiterSlot"]()
    ref = slot.start()
    ref.stop()
    result = example["lookup_tool"](slot).handler({"city": "Paris"})
    assert result.code == "LIMITER_UNAVAILABLE"


def test_the_bucket_refills_with_time(example: dict[str, Any]) -> None:
    """Tokens come back at ``rate`` per second of the injected clock."""
    now = [0.0]
    ref = example["RateLimiter"].start(1, 2.0, clock=lambda: now[0])
    try:
        limiter = ref.proxy()
        assert limiter.acquire().get(timeout=TIMEOUT) is True
        assert limiter.acquire().get(timeout=TIMEOUT) is False
        now[0] = 0.5
        assert limiter.acquire().get(timeout=TIMEOUT) is True
    finally:
        ref.stop()
