"""Measure what stopped sessions leave behind: RSS growth per session touched once (not a test).

    python bench/bookkeeping.py                       # 1,000,000 sessions (~10 min on 2 vCPUs)
    python bench/bookkeeping.py --quick               # 20,000 sessions, a smoke run
    python bench/bookkeeping.py --store memory --sessions 40000

Each session is new, runs once (an ``async def`` model that answers at once, so the run is the
cheapest one that commits and leaves a log version behind), and is passivated by the LRU when
its place among ``max_live_sessions`` (1,000) is needed: after the first 1,000, every session
touched stops another. What the runtime keeps of a stopped session is its log version (for the
rollback check, ``versions_kept``); the store keeps the session's log, on disk with SQLite (the
default here: its page cache is bounded) or in RAM with the in-memory store (``--store
memory``: that growth is the sessions' data, not bookkeeping).

Targets: RSS within 300 MB of the start after 1,000,000 sessions; at most 200 bytes
kept per stopped session, measured on the heap (``tracemalloc``) for the map of kept versions.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from _machine import OtherLoad, cpu_model, load_note, rss_bytes

from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.runtime._kernel._versions import StoppedVersions

LIVE = 1000  # max_live_sessions: the live set stays this size, every later session stops one
BATCH = 500  # runs in flight at once; half the live set, so the other half can be evicted
MB = 1_000_000


async def zero_model(_request: Request) -> Response:
    """Answer at once."""
    await asyncio.sleep(0)
    return Response(message_assistant("ok"))


def touch(rt: Runtime, start: int, stop: int) -> None:
    """Run once on each of sessions ``start`` to ``stop`` (new ones), ``BATCH`` at a time."""
    for low in range(start, stop, BATCH):
        futures = [rt.session(f"s{i}").run("hi") for i in range(low, min(stop, low + BATCH))]
        for future in futures:
            future.get(timeout=120)


def marks(n: int) -> list[int]:
    """Where to measure: 2 x the live set (the baseline of the per-session figure), then up."""
    points = {2 * LIVE, n // 10, n // 4, n // 2, 3 * n // 4, n}
    return sorted(p for p in points if p >= 2 * LIVE)


def heap_per_version(n: int) -> tuple[float, float]:
    """Return (bytes per entry, bytes per entry at the peak) of ``n`` kept versions."""
    versions = StoppedVersions(n)
    ids = [f"tenant-{i:07d}/conversation-{i:012d}" for i in range(2 * n)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i, session_id in enumerate(ids):  # twice the cap: the map turns over
            versions.stopped(session_id, 1000 + i)
        used, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (used - before) / len(versions), (peak - before) / len(versions)


def measure(n: int, store_kind: str) -> dict[str, Any]:
    """Touch ``n`` sessions once each; print and return RSS at each mark."""
    rows: list[tuple[int, int, int, int, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        store: Any = None if store_kind == "memory" else Path(tmp) / "s.sqlite3"
        rt = Runtime.start(store, idle_timeout=None, max_live_sessions=LIVE, timeout=60)
        try:
            rt.register_agent("default", lambda: new_agent_options(zero_model))
            rt.session("warm").run("hi").get(timeout=60)
            gc.collect()
            start_rss = rss_bytes()
            began = time.perf_counter()
            done = 0
            print(
                f"{'touched':>10}{'stopped':>10}{'kept':>9}{'RSS MB':>9}{'vs start':>10}"
                f"{'B/stopped':>11}{'s':>7}",
                flush=True,
            )
            for mark in marks(n):
                touch(rt, done, mark)
                done = mark
                gc.collect()
                stats = rt.statistics()
                rss = rss_bytes()
                rows.append(
                    (
                        mark,
                        stats.passivations,
                        stats.stopped_versions,
                        rss,
                        time.perf_counter() - began,
                    )
                )
                base_rss, base_stopped = rows[0][3], rows[0][1]
                per = (rss - base_rss) / max(1, stats.passivations - base_stopped)
                print(
                    f"{mark:>10,}{stats.passivations:>10,}{stats.stopped_versions:>9,}"
                    f"{rss / MB:>9.1f}{(rss - start_rss) / MB:>10.1f}{per:>11.0f}"
                    f"{time.perf_counter() - began:>7.0f}",
                    flush=True,
                )
        finally:
            rt.stop()
    return {"start": start_rss, "rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20,000 sessions, a smoke run")
    parser.add_argument("--sessions", type=int, default=None, help="sessions to touch")
    parser.add_argument("--store", choices=("sqlite", "memory"), default="sqlite")
    args = parser.parse_args()
    n = args.sessions or (20_000 if args.quick else 1_000_000)
    print(f"praxo-actors bookkeeping benchmark: {n:,} sessions touched once, {args.store} store")
    print(
        f"  Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs ({cpu_model()})"
    )
    print(f"  {load_note()}")
    others = OtherLoad()
    result = measure(n, args.store)
    start, rows = result["start"], result["rows"]
    last, first = rows[-1], rows[0]
    total = (last[3] - start) / MB
    per = (last[3] - first[3]) / max(1, last[1] - first[1])
    entry, peak = heap_per_version(100_000)
    print()
    print(f"RSS growth per stopped session, {first[0]:,} -> {last[0]:,} touched: {per:,.0f} B")
    ok = total <= 300 or args.store == "memory"
    print(
        f"RSS growth against the start: {total:,.1f} MB [target <= 300 MB after 1,000,000 "
        f"sessions{', the sessions data in RAM: no target' if args.store == 'memory' else ''}]"
        f" {'ok' if ok else 'MISSED'}"
    )
    print(
        f"heap per kept version (100,000 kept, turned over once): {entry:.0f} B, "
        f"{peak:.0f} B at the peak of a resize [target <= 200 B] "
        f"{'ok' if entry <= 200 else 'MISSED'}"
    )
    print(f"  {others.note()}")
    return 0 if ok and entry <= 200 else 1


if __name__ == "__main__":
    sys.exit(main())
