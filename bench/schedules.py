"""Measure schedules: what pending ones cost, and firing many at once (not a test).

    python bench/schedules.py                  # 100,000 pending; 10,000 due at once
    python bench/schedules.py --quick          # 5,000 pending; 1,000 due at once (a smoke run)

1. Pending: a SQLite store holds ``--pending`` schedules (every day, none due). A child process
   starts a runtime on it with ``resume=True`` and reports its RSS and start-up time, and when
   its runner had read them all (on its own thread, after the start; it keeps in memory only
   the fires due within the hour, see ``HORIZON_NS``). Another child does the same on a store
   holding no schedule, of the same size (the floor). Targets: at most 200 bytes of RSS per
   pending schedule beyond the floor, and a start-up at most 2x the floor's.
2. Due at once: ``--due`` sessions each hold a schedule that falls due at the same instant of a
   ``ManualClock``; the time from the clock's step to the last run's result gives a fire rate,
   set beside the rate of ``--due`` ``submit`` calls (and their results) on the same runtime
   (the floor). Target: the fire rate at least half the submit rate. In-memory store, an
   ``async def`` model that answers at once: what is measured is the path, not the model.
3. Lateness: ``--late`` schedules due at random over ``--spread`` seconds of real time; how
   late each ``schedule.fired`` reaches a subscriber. Target: at most 50 ms at p99 (a quiet
   machine).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _machine import OtherLoad, cpu_model, load_note, rss_bytes

from praxo_actors.agent import new_agent_options
from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.memory._schedules import SCHEDULES, ScheduleRow
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.runtime._schedule._runner import run_id_of
from praxo_actors.testing import ManualClock

_NS = 1_000_000_000
_DAY = 86_400 * _NS
START = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


async def zero_model(_request: Request) -> Response:
    """Answer at once."""
    return Response(message_assistant("ok"))


def fill(path: Path, n: int, schedules: bool) -> None:
    """Write ``n`` schedules (or ``n`` plain documents of the same size) into a new store."""
    first = int(START.timestamp()) * _NS + _DAY
    with SQLiteStore(path, synchronous="NORMAL") as store:
        for low in range(0, n, 10_000):
            rows = []
            for i in range(low, min(n, low + 10_000)):
                row = ScheduleRow(
                    f"sch-{i:032x}", f"session-{i:07d}", "", "check", "every", first, every_ns=_DAY
                )
                ns = SCHEDULES if schedules else ("bench", "filler")
                rows.append((ns, row.id, _row_doc(row)))
            store.put_many(rows)


def _row_doc(row: ScheduleRow) -> dict[str, Any]:
    import msgspec

    doc: dict[str, Any] = msgspec.to_builtins(row)
    return doc


def child_startup(path: str) -> None:
    """Start a runtime on ``path`` with ``resume=True``; print its start-up time and RSS."""
    clock = ManualClock(START.timestamp())
    before = rss_bytes()
    began = time.perf_counter()
    rt = Runtime.start(path, resume=True, clock=clock, idle_timeout=None)
    took = time.perf_counter() - began
    try:
        assert rt._schedules.loaded.wait(600)
        loaded = time.perf_counter() - began
        # The floor reads its documents as the runner read the schedules: the same SQLite page
        # cache (bounded, 2 MB) warmed on both sides, so the difference is the schedules'.
        offset = 0
        while page := rt.store.search(("bench", "filler"), limit=1000, offset=offset):
            offset += len(page)
        report = {
            "seconds": took,
            "loaded_s": loaded,
            "rss": rss_bytes(),
            "rss_before": before,
            "armed": len(rt._schedules._armed),
        }
        print(json.dumps(report))
    finally:
        rt.stop()


def startup(path: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    ).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def pending(n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        with_path, floor_path = Path(tmp) / "with.db", Path(tmp) / "floor.db"
        fill(with_path, n, schedules=True)
        fill(floor_path, n, schedules=False)
        floor = min((startup(floor_path) for _ in range(3)), key=lambda r: r["seconds"])
        loaded = min((startup(with_path) for _ in range(3)), key=lambda r: r["seconds"])
    per = (loaded["rss"] - floor["rss"]) / n
    ratio = loaded["seconds"] / floor["seconds"]
    return {
        "pending": n,
        "armed": loaded["armed"],
        "rss_per_schedule_bytes": round(per, 1),
        "startup_s": round(loaded["seconds"], 3),
        "startup_floor_s": round(floor["seconds"], 3),
        "startup_ratio": round(ratio, 2),
        "read_all_s": round(loaded["loaded_s"], 3),  # the runner's first read, after start-up
        "meets_rss_target": per <= 200,
        "meets_startup_target": ratio <= 2,
    }


def due_at_once(n: int) -> dict[str, Any]:
    clock = ManualClock(START.timestamp())
    with Runtime.start(InMemoryStore(), clock=clock, idle_timeout=None, timeout=120) as rt:
        rt.register_agent("default", lambda: new_agent_options(zero_model))
        # The floor: n submits to n sessions, then every result.
        began = time.perf_counter()
        ids = [(f"p{i}", rt.session(f"p{i}").submit("hi")) for i in range(n)]
        for sid, run_id in ids:
            rt.session(sid).result(run_id, timeout=120)
        submit_s = time.perf_counter() - began
        made = [rt.session(f"f{i}").schedule("hi", after=60) for i in range(n)]
        occurrence = int(START.timestamp()) * _NS + 60 * _NS
        began = time.perf_counter()
        clock.advance(60)
        for schedule in made:
            handle = rt.session(schedule.session_id)
            _wait_result(handle, run_id_of(schedule.id, occurrence))
        fire_s = time.perf_counter() - began
    ratio = (n / fire_s) / (n / submit_s)
    return {
        "due": n,
        "fire_per_s": round(n / fire_s),
        "submit_per_s": round(n / submit_s),
        "fire_to_submit_rate": round(ratio, 2),
        "meets_rate_target": ratio >= 0.5,
    }


def _wait_result(handle: Any, run_id: str) -> None:
    from praxo_actors import PraxoError

    deadline = time.monotonic() + 120
    while True:
        try:
            handle.result(run_id, timeout=120)
            return
        except PraxoError as exc:
            if exc.code != "RUNTIME_UNKNOWN_RUN" or time.monotonic() > deadline:
                raise
            time.sleep(0.001)  # a benchmark, not a test: poll until the fire reached it


def lateness(n: int, spread: float) -> dict[str, Any]:
    """Fire ``n`` schedules due at random times over ``spread`` seconds of real time; return
    how late each ``schedule.fired`` reached a subscriber, past its occurrence."""
    import random
    import threading

    late: list[float] = []
    done = threading.Event()

    def seen(event: Any) -> None:
        late.append((time.time_ns() - event.data["occurrence_ns"]) / 1e6)
        if len(late) >= n:
            done.set()

    with Runtime.start(InMemoryStore(), idle_timeout=None, timeout=60) as rt:
        rt.register_agent("default", lambda: new_agent_options(zero_model))
        rt.events.subscribe(seen, "schedule.fired", buffer=n + 10)
        for i in range(n):
            rt.session(f"l{i}").schedule("hi", after=0.5 + random.random() * spread)
        done.wait(spread + 60)
    late.sort()
    p99 = late[min(len(late) - 1, int(len(late) * 0.99))]
    return {
        "fires": len(late),
        "late_ms_p50": round(late[len(late) // 2], 2),
        "late_ms_p99": round(p99, 2),
        "late_ms_max": round(late[-1], 2),
        "meets_p99_target": p99 <= 50,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pending", type=int, default=100_000)
    parser.add_argument("--due", type=int, default=10_000)
    parser.add_argument("--late", type=int, default=1000, help="real-time fires timed")
    parser.add_argument("--spread", type=float, default=10.0, help="seconds they spread over")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_startup(args.child)
        return 0
    if args.quick:
        args.pending, args.due, args.late, args.spread = 5_000, 1_000, 200, 3.0
    print(f"# {cpu_model()}; {load_note()}; Python {sys.version.split()[0]}")
    other = OtherLoad()
    results = {
        "pending": pending(args.pending),
        "due_at_once": due_at_once(args.due),
        "lateness": lateness(args.late, args.spread),
    }
    results["other_load"] = other.note()
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
