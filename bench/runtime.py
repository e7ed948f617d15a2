"""Benchmark the actor runtime against its floors, side by side in one run (not a test).

    python bench/runtime.py            # every section, full sizes
    python bench/runtime.py --quick    # smaller sizes, for a smoke run

Sections (targets in brackets):
1. per-run overhead through the runtime vs direct ``run_agent`` (zero-latency model, in-memory
   store), next to a bare Pykka ask and, when installed, autogen-core's ``send_message``
   [overhead < autogen-core send and <= 3 bare Pykka asks];
2. 10,000 concurrent runs on 10,000 live sessions, async model sleeping 0.5 s [<= 1.0 s wall];
3. live idle sessions: RSS per session [<= 4 KiB];
4. passivated sessions in SQLite: reactivation latency p50/p99 [p99 <= 5 ms];
5. event fan-out to 10 subscribers [>= 200,000 deliveries/s].
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pykka
import structlog
from _machine import cpu_model, rss_bytes

from praxo_actors.agent import new_agent_options, run_agent
from praxo_actors.core import dump_checkpoint
from praxo_actors.memory import SQLiteStore
from praxo_actors.models import Event, Request, Response, message_assistant, message_user, session
from praxo_actors.runtime import Runtime
from praxo_actors.runtime._store_actor import CHECKPOINT_NAMESPACE

structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
logging.getLogger("pykka").setLevel(logging.CRITICAL)


def zero_model(_request: Request) -> Response:
    return Response(message_assistant("ok"))


async def slow_model(_request: Request) -> Response:
    await asyncio.sleep(0.5)
    return Response(message_assistant("ok"))


def row(name: str, value: str, target: str = "", verdict: str = "") -> None:
    print(f"  {name:<52} {value:>16}  {target:<22} {verdict}")


def ok(flag: bool) -> str:
    return "met" if flag else "MISSED"


# -- 1. per-run overhead -------------------------------------------------------------------


class _Echo(pykka.ThreadingActor):
    def on_receive(self, message: Any) -> Any:
        return message


def bare_pykka_ask_us(n: int) -> float:
    ref = _Echo.start()
    try:
        for _ in range(200):
            ref.ask(1)
        t = time.perf_counter()
        for _ in range(n):
            ref.ask(1)
        return (time.perf_counter() - t) / n * 1e6
    finally:
        ref.stop()


try:  # optional: compared against when installed
    from autogen_core import (
        AgentId,
        MessageContext,
        RoutedAgent,
        SingleThreadedAgentRuntime,
        message_handler,
    )
except ImportError:
    RoutedAgent = None
else:

    @dataclass
    class _Text:
        text: str

    class _AutogenEcho(RoutedAgent):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__("echo")

        @message_handler  # type: ignore[misc]
        async def on_text(self, message: _Text, ctx: MessageContext) -> _Text:
            return message


def autogen_send_us(n: int) -> float | None:
    if RoutedAgent is None:
        return None

    async def main() -> float:
        rt = SingleThreadedAgentRuntime()
        await _AutogenEcho.register(rt, "echo", lambda: _AutogenEcho())
        rt.start()
        target = AgentId("echo", "default")
        for _ in range(200):
            await rt.send_message(_Text("x"), target)
        t = time.perf_counter()
        for _ in range(n):
            await rt.send_message(_Text("x"), target)
        elapsed = time.perf_counter() - t
        await rt.stop()
        return elapsed / n * 1e6

    return asyncio.run(main())


def per_run_overhead(n: int) -> None:
    print("\n1. Per-run overhead (zero-latency sync model, in-memory store, sequential runs)")
    print("   each session gets 5 runs (a checkpoint snapshots the whole history, so a session")
    print("   with thousands of messages pays for its size; real sessions are short)")
    options = new_agent_options(zero_model)

    def direct_loop(count: int) -> float:
        t = time.perf_counter()
        s = session("d0")
        for i in range(count):
            if i % 5 == 0:
                s = session(f"d{i}")
            s = run_agent(options, s, "x").session
        return (time.perf_counter() - t) / count * 1e6

    direct_loop(200)
    direct = direct_loop(n)
    with Runtime.start(idle_timeout=None) as rt:
        rt.register_agent("zero", lambda: options)

        def runtime_loop(prefix: str, count: int) -> float:
            handle = rt.session(f"{prefix}0", agent="zero")
            handle.run("x").get(timeout=10)
            total = 0.0
            for i in range(count):
                if i % 5 == 0:  # activate the next session outside the timing
                    handle = rt.session(f"{prefix}{i}", agent="zero")
                    handle.run("warm").get(timeout=10)
                t = time.perf_counter()
                handle.run("x").get(timeout=10)
                total += time.perf_counter() - t
            return total / count * 1e6

        runtime_loop("w", 200)
        through = runtime_loop("m", n)
    ask = bare_pykka_ask_us(n)
    autogen = autogen_send_us(n)
    overhead = through - direct
    row("direct run_agent, per run", f"{direct:,.1f} µs")
    row("through the runtime, per run (live session)", f"{through:,.1f} µs")
    row("runtime overhead, per run", f"{overhead:,.1f} µs")
    row("bare Pykka ask round trip", f"{ask:,.1f} µs")
    row(
        "overhead / bare Pykka ask",
        f"{overhead / ask:,.2f}×",
        "<= 3×",
        ok(overhead <= 3 * ask),
    )
    if autogen is None:
        row("autogen-core send_message", "not installed", "overhead < autogen")
    else:
        row("autogen-core send_message", f"{autogen:,.1f} µs")
        row(
            "overhead / autogen-core send",
            f"{overhead / autogen:,.2f}×",
            "< 1×",
            ok(overhead < autogen),
        )


# -- 2. concurrent slow runs ---------------------------------------------------------------


def concurrent_runs(n: int) -> None:
    print(f"\n2. {n:,} concurrent runs on {n:,} live sessions, async model sleeping 0.5 s")
    with Runtime.start(idle_timeout=None) as rt:
        rt.register_agent("zero", lambda: new_agent_options(zero_model))
        rt.register_agent("slow", lambda: new_agent_options(slow_model))
        t = time.perf_counter()
        warm = [rt.session(f"s{i}", agent="zero").run("warm") for i in range(n)]
        for f in warm:
            f.get(timeout=120)
        activation = time.perf_counter() - t
        handles = [rt.session(f"s{i}", agent="slow") for i in range(n)]

        def burst() -> tuple[float, float]:
            t = time.perf_counter()
            futures = [h.run("go") for h in handles]
            submitted = time.perf_counter() - t
            for f in futures:
                f.get(timeout=120)
            return submitted, time.perf_counter() - t

        submitted, wall = burst()
        # A long-lived service freezes its start-up objects so the collector stops walking
        # them: with 10,000 suspended runs, collection was half the CPU time.
        gc.collect()
        gc.freeze()
        try:
            _, frozen = burst()
        finally:
            gc.unfreeze()
    row(f"activate {n:,} sessions and run once", f"{activation:,.2f} s")
    row(f"submit {n:,} runs", f"{submitted:,.2f} s")
    row(
        f"{n:,} runs done (wall, 0.5 s model latency)",
        f"{wall:,.2f} s",
        "<= 1.0 s",
        ok(wall <= 1.0),
    )
    row("the same after gc.freeze()", f"{frozen:,.2f} s", "<= 1.0 s", ok(frozen <= 1.0))


# -- 3. idle sessions memory ---------------------------------------------------------------


def idle_memory(n: int) -> None:
    print(f"\n3. {n:,} live idle sessions (each ran once), RSS per session")
    print("   each measured in a fresh process, so memory freed by earlier sections cannot hide it")
    for label, store in (("in-memory store", "memory"), ("SQLite store", "sqlite")):
        out = subprocess.run(
            [sys.executable, __file__, "--idle-child", str(n), store],
            capture_output=True,
            text=True,
            timeout=1800,
            check=True,
        ).stdout.split()
        live, per, stop = int(out[0]), float(out[1]), float(out[2])
        row(f"live sessions ({label})", f"{live:,}")
        target = "<= 4 KiB"
        row(
            f"RSS per live idle session ({label})",
            f"{per / 1024:,.2f} KiB",
            target,
            ok(per <= 4096),
        )
        row(f"runtime stop with them all live ({label})", f"{stop:,.1f} s")
    print("   the in-memory store also holds each session's checkpoint (~0.5 KiB here) in RAM")


def idle_child(n: int, store_kind: str) -> None:
    """Measure idle sessions in this (fresh) process; print: live, bytes per session, stop s."""
    with tempfile.TemporaryDirectory() as tmp:
        store: Any = None if store_kind == "memory" else Path(tmp) / "s.sqlite3"
        rt = Runtime.start(store, idle_timeout=None, max_live_sessions=n + 10)
        rt.register_agent("zero", lambda: new_agent_options(zero_model))
        rt.session("warm", agent="zero").run("x").get(timeout=10)
        gc.collect()
        before = rss_bytes()
        batch = 2000
        for start in range(0, n, batch):
            futures = [
                rt.session(f"s{i}", agent="zero").run("x")
                for i in range(start, min(n, start + batch))
            ]
            for f in futures:
                f.get(timeout=120)
        gc.collect()
        after = rss_bytes()
        live = rt.statistics().live_sessions
        t = time.perf_counter()
        rt.stop()
        print(live, (after - before) / n, time.perf_counter() - t)


# -- 4. reactivation from SQLite -----------------------------------------------------------


def reactivation(n: int, samples: int) -> None:
    print(f"\n4. {n:,} passivated sessions in SQLite: reactivation latency ({samples:,} samples)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sessions.sqlite3"
        store = SQLiteStore(path, synchronous="NORMAL")
        t = time.perf_counter()
        batch = 10_000
        for start in range(0, n, batch):
            entries = []
            for i in range(start, min(n, start + batch)):
                s = session(f"p{i}")
                s = type(s)(
                    id=s.id,
                    messages=[message_user("hello"), message_assistant("ok")],
                )
                entries.append(
                    (CHECKPOINT_NAMESPACE, s.id, {"checkpoint": dump_checkpoint(s).decode()})
                )
            store.put_many(entries)
        fill = time.perf_counter() - t
        store.close()
        size = path.stat().st_size
        with Runtime.start(path, idle_timeout=None) as rt:
            rt.register_agent("zero", lambda: new_agent_options(zero_model))
            rt.session("warm", agent="zero").run("x").get(timeout=10)
            ids = random.Random(7).sample(range(n), samples)
            latencies = []
            for i in ids:
                t = time.perf_counter()
                result = rt.session(f"p{i}", agent="zero").run("x").get(timeout=10)
                latencies.append(time.perf_counter() - t)
                assert len(result.session.messages) == 4
            live = []
            h = rt.session(f"p{ids[0]}", agent="zero")
            for _ in range(samples // 4):
                t = time.perf_counter()
                h.run("x").get(timeout=10)
                live.append(time.perf_counter() - t)
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1e3
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1e3
    row("fill (put_many, NORMAL sync)", f"{fill:,.1f} s", f"{size / 2**20:,.0f} MiB file")
    row("reactivate + run (restore, run, checkpoint) p50", f"{p50:,.2f} ms")
    row("reactivate + run p99", f"{p99:,.2f} ms", "p99 <= 5 ms", ok(p99 <= 5))
    row("run on a live session p50 (for comparison)", f"{statistics.median(live) * 1e3:,.2f} ms")


# -- 5. event fan-out ----------------------------------------------------------------------


def fanout(events: int, subscribers: int) -> None:
    print(f"\n5. Event fan-out: {events:,} events to {subscribers} subscribers")
    with Runtime.start(idle_timeout=None) as rt:
        counts = [0] * subscribers
        done = threading.Event()
        total = events * subscribers
        delivered = [0]
        lock = threading.Lock()

        def make(i: int) -> Any:
            def sink(_event: Event) -> None:
                counts[i] += 1
                if counts[i] == events:
                    with lock:
                        delivered[0] += 1
                        if delivered[0] == subscribers:
                            done.set()

            return sink

        subs = [
            rt.events.subscribe(make(i), pattern="*", buffer=events) for i in range(subscribers)
        ]
        batch = [
            Event(
                type="tool.completed", run_id="r", session_id="s", seq=i, time_ns=0, data={"n": i}
            )
            for i in range(10)
        ]
        from praxo_actors.runtime._protocol import Publish, encode

        message = encode(Publish(events=batch))
        bus = rt._core.bus_ref
        t = time.perf_counter()
        for _ in range(events // 10):
            bus.tell(message)
        finished = done.wait(120)
        elapsed = time.perf_counter() - t
        dropped = sum(s.statistics().dropped for s in subs)
    rate = total / elapsed
    row("deliveries", f"{sum(counts):,}", "", "" if finished else "INCOMPLETE")
    row("dropped", f"{dropped:,}")
    row("deliveries per second", f"{rate:,.0f}/s", ">= 200,000/s", ok(rate >= 200_000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--only", type=int, action="append", help="run only these sections")
    parser.add_argument("--idle-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.idle_child:
        idle_child(int(args.idle_child[0]), args.idle_child[1])
        return
    q = args.quick
    print("praxo-actors runtime benchmark")
    print(
        f"  Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs ({cpu_model()}), pykka {pykka_version()}"
    )
    sections = {
        1: lambda: per_run_overhead(500 if q else 3000),
        2: lambda: concurrent_runs(1000 if q else 10_000),
        3: lambda: idle_memory(5000 if q else 100_000),
        4: lambda: reactivation(20_000 if q else 1_000_000, 200 if q else 2000),
        5: lambda: fanout(5000 if q else 50_000, 10),
    }
    for number, section in sections.items():
        if args.only and number not in args.only:
            continue
        section()
        sys.stdout.flush()


def pykka_version() -> str:
    from importlib.metadata import version

    return version("pykka")


if __name__ == "__main__":
    main()
