"""Compare MNActor (shared scheduler threads) with Pykka's ThreadingActor (a thread per actor).

Run: ``python bench/mn_actors.py [--idle N] [--threading-idle N] [--many N] [--quick]``. Each
measurement runs in a fresh interpreter so that RSS figures do not inherit another one's heap;
one run, printed side by side. ThreadingActor memory is measured on ``--threading-idle`` actors
(2,000 by default) and extrapolated: starting 100,000 threads would hit the kernel's limit.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pykka
from _machine import rss_bytes

from praxo_actors.actors import MNActor, Scheduler
from supervisors import _pykka_compat as compat


class MNEcho(MNActor):
    """Replies with the message."""

    def on_receive(self, message: Any) -> Any:
        return message


class ThreadEcho(pykka.ThreadingActor):
    """Replies with the message."""

    def on_receive(self, message: Any) -> Any:
        return message


class MNCount(MNActor):
    """Counts messages; replies with the count."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def on_receive(self, message: Any) -> Any:
        self.n += 1
        return self.n


class ThreadCount(pykka.ThreadingActor):
    """Counts messages; replies with the count."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def on_receive(self, message: Any) -> Any:
        self.n += 1
        return self.n


def _starter(kind: str, sched: Scheduler) -> Callable[[], pykka.ActorRef[Any]]:
    if kind == "mn":
        return lambda: MNEcho.start(actor_scheduler=sched)
    return ThreadEcho.start


def _stop_all(refs: list[pykka.ActorRef[Any]]) -> float:
    # Oldest first: Pykka's registry is a list, and unregistering scans it from the front.
    start = time.perf_counter()
    stops = [ref.stop(block=False) for ref in refs]
    for stop in stops:
        stop.get(timeout=600)
    return time.perf_counter() - start


def ask_round_trip(kind: str, count: int) -> dict[str, float]:
    """Time blocking asks to one actor from the main thread."""
    with Scheduler(2) as sched:
        start_one = _starter(kind, sched)
        ref = start_one()
        for i in range(1000):
            ref.ask(i)
        start = time.perf_counter()
        for i in range(count):
            ref.ask(i)
        elapsed = time.perf_counter() - start
        ref.stop()
    return {"us_per_ask": elapsed / count * 1e6}


def idle_memory(kind: str, count: int) -> dict[str, float]:
    """Measure RSS growth per idle actor, then time stopping them all."""
    with Scheduler(2) as sched:
        start_one = _starter(kind, sched)
        start_one().stop()
        gc.collect()
        before = rss_bytes()
        start = time.perf_counter()
        refs = [start_one() for _ in range(count)]
        started = time.perf_counter() - start
        # Every actor has run on_start once its ask is answered: all are idle afterwards.
        for ref in refs:
            ref.ask(None)
        gc.collect()
        per_actor = (rss_bytes() - before) / count
        registry = sys.getsizeof(compat.registry_list()) / count
        stop_s = _stop_all(refs)
    return {
        "rss_bytes_per_actor": per_actor,
        "start_us_per_actor": started / count * 1e6,
        "registry_list_bytes_per_actor": registry,
        "stop_all_s": stop_s,
    }


def traced_memory(count: int) -> dict[str, float]:
    """Measure Python heap bytes per idle MNActor with tracemalloc."""
    with Scheduler(2) as sched:
        MNEcho.start(actor_scheduler=sched).stop()
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        refs = [MNEcho.start(actor_scheduler=sched) for _ in range(count)]
        for ref in refs:
            ref.ask(None)
        gc.collect()
        per_actor = (tracemalloc.get_traced_memory()[0] - before) / count
        tracemalloc.stop()
        _stop_all(refs)
    return {"traced_bytes_per_actor": per_actor}


def many_asked_once(kind: str, count: int) -> dict[str, float]:
    """Start ``count`` actors, ask each once (all in flight together), then stop them."""
    with Scheduler(2) as sched:
        start_one = _starter(kind, sched)
        refs = [start_one() for _ in range(count)]
        start = time.perf_counter()
        replies = [ref.ask(i, block=False) for i, ref in enumerate(refs)]
        for reply in replies:
            reply.get(timeout=600)
        asked = time.perf_counter() - start
        stop_s = _stop_all(refs)
    return {"ask_all_s": asked, "stop_all_s": stop_s}


def tell_throughput(kind: str, count: int, actors: int) -> dict[str, float]:
    """Tell ``count`` messages spread over ``actors`` actors; time until all are handled."""
    with Scheduler(2) as sched:
        refs: list[pykka.ActorRef[Any]] = [
            MNCount.start(actor_scheduler=sched) if kind == "mn" else ThreadCount.start()
            for _ in range(actors)
        ]
        per_actor = count // actors
        start = time.perf_counter()
        for _ in range(per_actor):
            for ref in refs:
                ref.tell(None)
        totals = [ref.ask(None, block=False) for ref in refs]
        for total in totals:
            assert total.get(timeout=600) == per_actor + 1
        elapsed = time.perf_counter() - start
        _stop_all(refs)
    return {"msgs_per_s": per_actor * actors / elapsed}


def _run(section: str, args: argparse.Namespace) -> dict[str, float]:
    match section:
        case "ask-mn" | "ask-thread":
            return ask_round_trip(section.split("-")[1], args.asks)
        case "idle-mn":
            return idle_memory("mn", args.idle)
        case "idle-thread":
            return idle_memory("thread", args.threading_idle)
        case "traced-mn":
            return traced_memory(args.traced)
        case "many-mn" | "many-thread":
            return many_asked_once(section.split("-")[1], args.many)
        case "tell1-mn" | "tell1-thread":
            return tell_throughput(section.split("-")[1], args.tells, 1)
        case "fan-mn" | "fan-thread":
            return tell_throughput(section.split("-")[1], args.tells, args.fan)
    raise SystemExit(f"unknown section {section}")


def _child(section: str, argv: list[str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, *argv, "--section", section],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--asks", type=int, default=20_000)
    parser.add_argument("--idle", type=int, default=100_000)
    parser.add_argument("--threading-idle", type=int, default=2_000)
    parser.add_argument("--traced", type=int, default=20_000)
    parser.add_argument("--many", type=int, default=10_000)
    parser.add_argument("--tells", type=int, default=200_000)
    parser.add_argument("--fan", type=int, default=1_000)
    parser.add_argument("--quick", action="store_true", help="small counts, for a smoke run")
    parser.add_argument("--section", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.asks, args.idle, args.threading_idle = 2_000, 5_000, 200
        args.traced, args.many, args.tells, args.fan = 2_000, 500, 20_000, 100
    if args.section:
        print(json.dumps(_run(args.section, args)))
        return
    argv = [a for a in sys.argv[1:] if a != "--quick"]
    if args.quick:
        argv += ["--quick"]
    r = {name: _child(name, argv) for name in (
        "ask-mn", "ask-thread", "idle-mn", "traced-mn", "idle-thread",
        "many-mn", "many-thread", "tell1-mn", "tell1-thread", "fan-mn", "fan-thread",
    )}  # fmt: skip
    idle_mn, idle_th = r["idle-mn"], r["idle-thread"]
    rows = [
        ("ask round trip (µs)", r["ask-mn"]["us_per_ask"], r["ask-thread"]["us_per_ask"]),
        (
            f"RSS per idle actor (B; MN: {args.idle:,}, thread: {args.threading_idle:,})",
            idle_mn["rss_bytes_per_actor"],
            idle_th["rss_bytes_per_actor"],
        ),
        ("tracemalloc per idle MNActor (B)", r["traced-mn"]["traced_bytes_per_actor"], None),
        (
            f"RSS for {args.idle:,} idle actors (MiB; thread extrapolated)",
            idle_mn["rss_bytes_per_actor"] * args.idle / 2**20,
            idle_th["rss_bytes_per_actor"] * args.idle / 2**20,
        ),
        ("start per actor (µs)", idle_mn["start_us_per_actor"], idle_th["start_us_per_actor"]),
        (
            "registry list per actor (B)",
            idle_mn["registry_list_bytes_per_actor"],
            idle_th["registry_list_bytes_per_actor"],
        ),
        (f"stop {args.idle:,} idle MNActors (s)", idle_mn["stop_all_s"], None),
        (f"{args.many:,} actors asked once (s)", r["many-mn"]["ask_all_s"],
         r["many-thread"]["ask_all_s"]),
        (f"stop {args.many:,} actors (s)", r["many-mn"]["stop_all_s"],
         r["many-thread"]["stop_all_s"]),
        ("tells to 1 actor (msg/s)", r["tell1-mn"]["msgs_per_s"], r["tell1-thread"]["msgs_per_s"]),
        (f"tells over {args.fan:,} actors (msg/s)", r["fan-mn"]["msgs_per_s"],
         r["fan-thread"]["msgs_per_s"]),
    ]  # fmt: skip
    width = max(len(row[0]) for row in rows)
    print(f"{'':{width}}  {'MNActor':>14}  {'ThreadingActor':>14}")
    for label, mn, thread in rows:
        shown = "-" if thread is None else f"{thread:14,.1f}"
        print(f"{label:{width}}  {mn:14,.1f}  {shown:>14}")


if __name__ == "__main__":
    main()
