"""What the demo runs (:class:`DemoConfig`) and what it measured (:class:`DemoReport`).

A run's latency is the time from submitting it to its outcome. Against a model of ~50 ms most
of it is waiting, not the model: the demo drives ``concurrency`` sessions at once, so each run
queues behind the other runs in flight for the runtime's event loop, its actors and its store.
The report therefore splits each run's latency into the time its model calls took (the
simulated latency the model asked for) and the rest (waiting), and says so in its notes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

__all__ = ["DemoConfig", "DemoReport"]


@dataclass(frozen=True)
class DemoConfig:
    """What the demo runs; see ``praxo-actors demo --help``."""

    sessions: int = 2000
    runs_per_session: int = 3
    latency: float = 0.05
    failure_rate: float = 0.05
    store: str = ".praxo/demo.sqlite3"
    live: bool = True
    concurrency: int = 500
    idle_timeout: float = 1.0
    crashes: int | None = None
    seed: int | None = None
    run_timeout: float = 60.0
    observe: bool = False
    observe_port: int = 0
    keep: bool = False  # with observe: serve on after the demo until SIGINT or SIGTERM

    def crash_count(self) -> int:
        """Return how many sessions to crash (none when no later run could restore them)."""
        if self.runs_per_session < 2:
            return 0
        wanted = self.crashes if self.crashes is not None else max(1, self.sessions // 400)
        return min(wanted, self.sessions)


@dataclass
class DemoReport:
    """What the demo measured; ``ok`` decides the exit status.

    ``latencies`` holds each run's time from submission to outcome, and ``model_times`` (in
    the same order, when measured) the part of it that its model calls took.
    """

    runs_total: int
    elapsed: float = 0.0
    completed: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    model_times: list[float] = field(default_factory=list)
    concurrency: int = 0
    crashed_sessions: int = 0
    restored_sessions: int = 0
    consistent_sessions: int = 0
    sessions: int = 0
    crashes: int = 0
    activations: int = 0
    passivations: int = 0
    events_emitted: int = 0
    events_counted: int = 0
    events_dropped: int = 0

    @property
    def ok(self) -> bool:
        """Whether every run ended completed or with a code, and every history is consistent."""
        settled = self.completed + sum(self.failed.values()) == self.runs_total
        return settled and not self.unexpected and self.consistent_sessions == self.sessions

    def percentile(self, q: float, values: list[float] | None = None) -> float:
        """Return the ``q`` quantile of ``values`` (default: run latency) in seconds.

        Nearest rank; 0 when there are none.
        """
        values = self.latencies if values is None else values
        if not values:
            return 0.0
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def waiting_times(self) -> list[float]:
        """Each run's latency less its model time: the time it waited in the runtime."""
        return [max(0.0, t - m) for t, m in zip(self.latencies, self.model_times, strict=False)]

    @property
    def runs_per_second(self) -> float:
        """Runs ended (completed or failed) per second of the demo."""
        ended = self.completed + sum(self.failed.values())
        return ended / self.elapsed if self.elapsed else 0.0

    def rows(self) -> list[tuple[str, str]]:
        """Return the summary as (label, value) rows."""
        rows = [
            ("sessions", str(self.sessions)),
            ("runs", str(self.runs_total)),
            ("elapsed", f"{self.elapsed:.2f} s"),
            ("runs/s", f"{self.runs_per_second:.1f}"),
            ("latency p50", _ms(self.percentile(0.50))),
            ("latency p99", _ms(self.percentile(0.99))),
        ]
        if self.model_times:
            rows += [
                ("model time p50", _ms(self.percentile(0.50, self.model_times))),
                ("waiting p50", _ms(self.percentile(0.50, self.waiting_times))),
                ("waiting p99", _ms(self.percentile(0.99, self.waiting_times))),
            ]
        rows += [
            ("completed", str(self.completed)),
            ("failed", str(sum(self.failed.values()))),
        ]
        rows += [(f"failed {code}", str(n)) for code, n in sorted(self.failed.items())]
        if self.unexpected:
            rows.append(("ended without a code", str(len(self.unexpected))))
        rows += [
            ("crashes", str(self.crashes)),
            ("restored from checkpoint", f"{self.restored_sessions}/{self.crashed_sessions}"),
            ("activations", str(self.activations)),
            ("passivations", str(self.passivations)),
            ("events emitted", str(self.events_emitted)),
            ("events counted by subscriber", str(self.events_counted)),
            ("dropped", str(self.events_dropped)),
            ("histories consistent", f"{self.consistent_sessions}/{self.sessions}"),
        ]
        return rows

    def notes(self) -> list[str]:
        """Say what the latency rows measure, in sentences printed below the summary."""
        if not self.latencies:
            return []
        notes = [
            "latency: from submitting a run to its outcome, model calls and waiting together; "
            "model time: what the run's model calls took (the simulated model latency); "
            "waiting: the rest, time queued in the runtime rather than spent on the model."
        ]
        if self.concurrency > 1 and self.runs_per_second > 0:
            expected = self.concurrency / self.runs_per_second
            notes.append(
                f"{self.concurrency} sessions run at once (--concurrency), so each run waits "
                "behind the other runs in flight for the runtime's event loop, actors and "
                f"store: at {self.runs_per_second:.1f} runs/s, {self.concurrency} runs in "
                f"flight take about {self.concurrency} / {self.runs_per_second:.1f} = "
                f"{_ms(expected)} each (Little's law); fewer at once means less waiting."
            )
        return notes


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"
