"""Count the objects the garbage collector tracks for each live session and each run in flight.

A count, not a time: after ``gc.collect()`` the number of tracked objects one more idle session
(or one more run waiting on its model) adds is the same on every run of the same code, so a
test can assert it and a benchmark can print it. ``python -m praxo_actors.testing._tracked``
prints the counts and, per type, where the objects are held.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request, Response, message_assistant

__all__ = ["TrackedCounts", "count_bare_tasks", "count_tracked"]

_WARM = 50  # sessions run before counting, so that one-off caches are filled


@dataclass
class TrackedCounts:
    """Tracked objects added per idle live session and per run in flight on one.

    Attributes:
        idle: Per idle live session (each ran once: two messages).
        in_flight: Per run in flight on a live session (its model awaiting an event), beyond
            that session's own ``idle`` objects.
        bare_task: Per bare asyncio task running the same model, awaiting the same event (the
            floor: what the model's own await and an asyncio task cost, with no runtime).
        idle_types: Per type (``module.qualname``), the objects an idle session adds.
        in_flight_types: Likewise for a run in flight.
    """

    idle: float
    in_flight: float
    bare_task: float = 0.0
    idle_types: dict[str, float] = field(default_factory=dict)
    in_flight_types: dict[str, float] = field(default_factory=dict)

    @property
    def run_overhead(self) -> float:
        """Per run in flight, what the runtime adds beyond a bare task awaiting the model."""
        return self.in_flight - self.bare_task


def _settle(runtime: Any, timeout: float) -> None:
    """Let the sessions supervisor drop its last message (a thread-per-actor loop holds the
    message it handled last until the next one: here, the last batch of child specs), and the
    loop run what the store's last replies posted to it."""
    ref = runtime._sessions_ref
    if ref is not None:
        ref.proxy().count_children().get(timeout=timeout)
    for _ in range(3):
        runtime.statistics()


def _tracked() -> dict[int, Any]:
    gc.collect()
    return {id(o): o for o in gc.get_objects()}


def _histogram(before: dict[int, Any], after: dict[int, Any], n: int) -> dict[str, float]:
    counts = collections.Counter(
        f"{type(o).__module__}.{type(o).__qualname__}" for k, o in after.items() if k not in before
    )
    return {name: count / n for name, count in counts.most_common()}


class _Gate:
    """An async model that waits until released, counting the calls waiting on it."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.waiting = 0
        self.all_waiting = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.release: asyncio.Event | None = None
        self.on_all_waiting: Callable[[], object] | None = None

    async def __call__(self, _request: Request) -> Response:
        if self.release is None:
            self.loop = asyncio.get_running_loop()
            self.release = asyncio.Event()
        self.waiting += 1
        if self.waiting == self.expected:
            self.all_waiting.set()
            if self.on_all_waiting is not None:
                self.on_all_waiting()
        await self.release.wait()
        return Response(message_assistant("ok"))

    def open(self) -> None:
        if self.loop is not None and self.release is not None:
            self.loop.call_soon_threadsafe(self.release.set)


async def _zero(_request: Request) -> Response:
    return Response(message_assistant("ok"))


@contextmanager
def _runtime(store_kind: str, n: int) -> Iterator[Any]:
    from praxo_actors.runtime import Runtime

    with tempfile.TemporaryDirectory() as tmp:
        store: Any = None if store_kind == "memory" else Path(tmp) / "s.sqlite3"
        with Runtime.start(
            store, idle_timeout=None, max_live_sessions=2 * n + _WARM + 10
        ) as runtime:
            yield runtime


def count_tracked(store_kind: str = "memory", n: int = 400, timeout: float = 60.0) -> TrackedCounts:
    """Measure :class:`TrackedCounts` over ``n`` sessions on a fresh runtime.

    Args:
        store_kind: ``"memory"`` (the in-memory store) or ``"sqlite"`` (a temporary file).
        n: Sessions measured (the counts are per session).
        timeout: Bound on each wait.
    """
    gate = _Gate(n)
    with _runtime(store_kind, n) as runtime:
        runtime.register_agent("zero", lambda: new_agent_options(_zero))
        runtime.register_agent("gate", lambda: new_agent_options(gate))
        for i in range(_WARM):
            runtime.session(f"warm{i}", agent="zero").run("x").get(timeout=timeout)
        # Warm the gated path too, so that its one-off objects are not counted per run.
        warm = [runtime.session(f"warm{i}", agent="gate").run("x") for i in range(n)]
        _wait(gate.all_waiting, timeout)
        gate.open()
        for future in warm:
            future.get(timeout=timeout)
        gate.waiting, gate.release = 0, None
        gate.all_waiting.clear()
        del warm, future
        _settle(runtime, timeout)
        before = _tracked()
        futures = [runtime.session(f"s{i}", agent="zero").run("x") for i in range(n)]
        for future in futures:
            future.get(timeout=timeout)
        del futures, future
        _settle(runtime, timeout)
        idle = _tracked()

        running = [runtime.session(f"s{i}", agent="gate").run("x") for i in range(n)]
        _wait(gate.all_waiting, timeout)
        _settle(runtime, timeout)
        in_flight = _tracked()
        gate.open()
        for future in running:
            future.get(timeout=timeout)
        result = TrackedCounts(
            idle=(len(idle) - len(before)) / n,
            in_flight=(len(in_flight) - len(idle)) / n,
            idle_types=_histogram(before, idle, n),
            in_flight_types=_histogram(idle, in_flight, n),
        )
        del before, idle, in_flight
    result.bare_task = count_bare_tasks(n, timeout)
    return result


def count_bare_tasks(n: int = 200, timeout: float = 60.0) -> float:
    """Return the tracked objects per bare asyncio task awaiting a model like the runs' one."""
    gate = _Gate(n)
    request = Request(messages=[], tools=[], run_id="r", session_id="s", step=0)

    async def measure() -> float:
        before = _tracked()
        tasks = [asyncio.create_task(gate(request)) for _ in range(n)]
        reached = asyncio.Event()
        gate.on_all_waiting = reached.set
        await asyncio.wait_for(reached.wait(), timeout)
        during = _tracked()
        gate.open()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout)
        return (len(during) - len(before)) / n

    return asyncio.run(measure())


def _wait(event: threading.Event, timeout: float) -> None:
    if not event.wait(timeout):
        raise TimeoutError(f"the runs did not reach their model within {timeout} s")


def _print(label: str, total: float, types: dict[str, float], show: Callable[[str], None]) -> None:
    show(f"{label}: {total:.2f} tracked objects")
    for name, count in types.items():
        if count >= 0.5:
            show(f"  {count:6.2f}  {name}")


def main(argv: list[str]) -> int:
    """Print the counts for each store kind (``argv``: store kinds, default both)."""
    for kind in argv or ["memory", "sqlite"]:
        counts = count_tracked(kind)
        _print(f"{kind}: per idle live session", counts.idle, counts.idle_types, print)
        _print(f"{kind}: per run in flight", counts.in_flight, counts.in_flight_types, print)
        print(f"{kind}: per bare asyncio task awaiting the same model: {counts.bare_task:.2f}")
        print(f"{kind}: per run in flight, beyond that: {counts.run_overhead:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
