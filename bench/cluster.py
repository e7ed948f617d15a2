"""Benchmark ``ClusterRuntime`` against the embedded runtime and a bare Ray call, side by side
(not a test).

    python bench/cluster.py            # full sizes (~4 min on 2 vCPUs)
    python bench/cluster.py --quick    # smaller sizes

Needs the ``ray`` and ``postgres`` extras and PostgreSQL's server binaries (Debian:
``postgresql``). It starts a throwaway PostgreSQL server on 127.0.0.1 and a local three-node Ray
cluster (``ray.cluster_utils.Cluster``, one CPU each), and stops both. Every figure is measured
in this run next to its floor. Sections [targets]:

1. One run on a live session, zero-latency model, sequential, from a thread: the embedded
   ``Runtime`` (a fresh interpreter, the same PostgreSQL store) and the cluster with one host,
   against the floor of a bare Ray actor call round trip (an async actor method returning its
   argument) [the cluster adds <= 1 Ray call].
2. One host against the embedded runtime: N new sessions with one run each, all submitted at
   once from a coroutine on the caller's loop (Ray's loop in a host), sessions activated per
   second, then the RSS per live idle session. The host's figures are taken in its own
   process, by a ``Host`` with one method added, so they are the host's, not the driver's;
   the same burst sent through the cluster's API from a thread here is shown beside them
   [within 1.5x].
3. Runs per second with 1, 2 and 3 hosts, a CPU-bound scripted model (2 ms of pure Python per
   call, so it holds its host's GIL), every session's runs submitted at once; and PostgreSQL's
   transactions per run. This machine has 2 cores shared by the hosts, the driver, Ray and
   PostgreSQL: it can show that a second host adds a core's worth of work, not what 100 do.
4. A paper estimate of 100 hosts from the figures measured here.
5. Serving again after each fault of the fault suite (``tests/chaos``): a host SIGKILLed, a
   host paused 10 s, PostgreSQL restarted, each under 30 busy sessions; seconds from the
   fault's end until every session and every host serves [<= 10 s], with every history
   checked. ``--faults`` runs only this section.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _machine import OtherLoad, cpu_model, load_note, rss_bytes

HERE = Path(__file__).resolve().parent
MARKER = "BENCH-RESULT "
TARGET_CALLS = 1.0  # the cluster may add at most this many Ray calls to a run's latency
TARGET_HOST = 1.5  # one host holds the embedded runtime's figures within this factor
_SCHEMAS = itertools.count(1)


# -- what both sides measure -----------------------------------------------------------------


def latency_us(runtime: Any, runs: int, sessions: int = 20) -> float:
    """Mean latency of ``handle.run(x).get()`` over live sessions (warmed up first)."""
    handles = [runtime.session(f"lat-{i}", "zero") for i in range(sessions)]
    for future in [h.run("warm") for h in handles]:
        future.get(timeout=120)
    start = time.perf_counter()
    for i in range(runs):
        handles[i % sessions].run("x").get(timeout=60)
    return (time.perf_counter() - start) / runs * 1e6


def burst(runtime: Any, count: int, prefix: str) -> float:
    """Activate ``count`` new sessions with one run each, submitted at once; return seconds."""
    start = time.perf_counter()
    futures = [runtime.session(f"{prefix}-{i}", "zero").run("x") for i in range(count)]
    for future in futures:
        future.get(timeout=600)
    return time.perf_counter() - start


async def alatency_us(runtime: Any, runs: int, sessions: int = 20) -> float:
    """``latency_us`` from a coroutine: ``await handle.arun(x)``."""
    handles = [runtime.session(f"alat-{i}", "zero") for i in range(sessions)]
    for handle in handles:
        await handle.arun("warm")
    start = time.perf_counter()
    for i in range(runs):
        await handles[i % sessions].arun("x")
    return (time.perf_counter() - start) / runs * 1e6


async def aburst_and_memory(runtime: Any, count: int, prefix: str) -> dict[str, Any]:
    """From a coroutine: activate ``count`` new sessions with one run each, all at once; then
    this process's RSS growth per session they left live."""
    import asyncio

    gc.collect()
    before = rss_bytes()
    start = time.perf_counter()
    await asyncio.gather(
        *(runtime.session(f"{prefix}-{i}", "zero").arun("x") for i in range(count))
    )
    seconds = time.perf_counter() - start
    gc.collect()
    return {
        "activations_per_s": count / seconds,
        "rss_kib_per_session": (rss_bytes() - before) / count / 1024,
    }


# -- the embedded runtime, in a fresh interpreter ----------------------------------------------


def embedded_child(dsn: str, schema: str, runs: int, count: int) -> dict[str, Any]:
    import asyncio

    sys.path.insert(0, str(HERE))
    import _cluster_agents

    from praxo_actors.memory import PostgresStore
    from praxo_actors.runtime import Runtime

    store = PostgresStore(dsn, schema=schema)
    runtime = Runtime.start(store, idle_timeout=None)  # as a host starts its own
    try:
        runtime.register_agent("zero", _cluster_agents.zero)
        runtime.register_agent("busy", _cluster_agents.busy)
        # As in a host, whose calls arrive on Ray's event loop: a loop of the caller's own.
        out = asyncio.run(aburst_and_memory(runtime, count, "new"))
        out["alatency_us"] = asyncio.run(alatency_us(runtime, runs))
        out["latency_us"] = latency_us(runtime, runs)
        handles = [runtime.session(f"busy-{i}", "busy") for i in range(count // 10)]
        for future in [h.run("warm") for h in handles]:
            future.get(timeout=600)
        start = time.perf_counter()
        futures = [h.run(f"r{k}") for k in range(2) for h in handles]
        for future in futures:
            future.get(timeout=600)
        out["busy_runs_per_s"] = len(futures) / (time.perf_counter() - start)
        return out
    finally:
        runtime.stop()
        store.close()


def run_embedded(dsn: str, schema: str, runs: int, count: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", dsn, schema, str(runs), str(count)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"embedded child failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1][len(MARKER) :])
    return result


# -- the cluster -------------------------------------------------------------------------------


class Echo:
    """The floor: an async Ray actor whose method returns its argument (as ``Host`` is async)."""

    async def echo(self, value: str) -> str:
        return value


def ray_call_us(ray: Any, calls: int) -> float:
    actor = ray.remote(Echo).options(num_cpus=0).remote()
    try:
        for _ in range(50):
            ray.get(actor.echo.remote("warm"))
        start = time.perf_counter()
        for _ in range(calls):
            ray.get(actor.echo.remote("x"))
        return (time.perf_counter() - start) / calls * 1e6
    finally:
        ray.kill(actor)


def next_xid(dsn: str) -> int:
    """The next transaction id the server will assign (every writing transaction takes one;
    reading it takes none), so a difference counts the writes committed or not between."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text").fetchone()
    assert row is not None
    return int(row[0])


def pg_commit_rate(dsn: str, connections: int = 8, seconds: float = 2.0) -> float:
    """One-row upserts, each its own transaction, from ``connections`` threads: commits/s."""
    import threading

    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS praxo_bench_commits (k int PRIMARY KEY, v int)")
    counts = [0] * connections
    barrier = threading.Barrier(connections + 1)

    def writer(i: int) -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            barrier.wait()
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                conn.execute(
                    "INSERT INTO praxo_bench_commits VALUES (%s, 0) "
                    "ON CONFLICT (k) DO UPDATE SET v = praxo_bench_commits.v + 1",
                    (i,),
                )
                counts[i] += 1

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    barrier.wait()
    for thread in threads:
        thread.join()
    return sum(counts) / seconds


def throughput(ray: Any, dsn: str, hosts: int, sessions: int) -> dict[str, float]:
    from praxo_actors.cluster import ClusterRuntime

    schema = f"praxo_bench_{next(_SCHEMAS)}"
    cluster = ClusterRuntime.start(dsn, hosts=hosts, schema=schema, idle_timeout=None)
    try:
        cluster.register_agent("busy", "_cluster_agents:busy")
        handles = [cluster.session(f"s{i}", "busy") for i in range(sessions)]
        for future in [h.run("warm") for h in handles]:
            future.get(timeout=600)
        before = next_xid(dsn)
        start = time.perf_counter()
        futures = [h.run(f"r{k}") for k in range(2) for h in handles]
        for future in futures:
            future.get(timeout=600)
        seconds = time.perf_counter() - start
        transactions = next_xid(dsn) - before
        stats = cluster.statistics()
        assert stats.runs_failed == 0, stats
        return {
            "runs_per_s": len(futures) / seconds,
            "txn_per_run": transactions / len(futures),
            "txn_per_s": transactions / seconds,
        }
    finally:
        cluster.stop()


def host_figures(ray: Any, dsn: str, count: int, runs: int) -> dict[str, Any]:
    """The burst inside one session host of the cluster's own kind, in its process."""
    from praxo_actors.cluster._host import Host
    from praxo_actors.cluster._hub import Hub

    class MeasuredHost(Host):
        async def burst(self, count: int, runs: int) -> dict[str, Any]:
            out = await aburst_and_memory(self.runtime, count, "inside")
            out["alatency_us"] = await alatency_us(self.runtime, runs)
            return out

    hub = ray.remote(Hub).options(num_cpus=0).remote()
    ray.get(hub.register.remote("zero", "_cluster_agents:zero", False, False))
    schema = f"praxo_bench_{next(_SCHEMAS)}"
    host = (
        ray.remote(MeasuredHost)
        .options(num_cpus=0, max_concurrency=1000)
        .remote("measured", dsn, schema, {"idle_timeout": None}, hub)
    )
    try:
        ray.get(host.ping.remote(), timeout=120)
        figures: dict[str, Any] = ray.get(host.burst.remote(count, runs), timeout=900)
        ray.get(host.stop.remote(), timeout=120)
        return figures
    finally:
        ray.kill(host)
        ray.kill(hub)


def cluster_figures(ray: Any, dsn: str, runs: int, count: int) -> dict[str, Any]:
    from praxo_actors.cluster import ClusterRuntime

    out: dict[str, Any] = {"ray_call_us": ray_call_us(ray, runs)}
    schema = f"praxo_bench_{next(_SCHEMAS)}"
    cluster = ClusterRuntime.start(dsn, hosts=1, schema=schema, idle_timeout=None)
    try:
        cluster.register_agent("zero", "_cluster_agents:zero")
        out["latency_us"] = latency_us(cluster, runs)
        out["ray_call_us_after"] = ray_call_us(ray, runs)
        out["through_cluster_per_s"] = count / burst(cluster, count, "through")
    finally:
        cluster.stop()
    out.update(host_figures(ray, dsn, count, runs))
    out["pg_commits_per_s"] = pg_commit_rate(dsn)
    return out


# -- report ------------------------------------------------------------------------------------


def row(label: str, value: str, floor: str = "", ratio: str = "", target: str = "") -> None:
    print(f"  {label:<52}{value:>12}{floor:>12}{ratio:>8}  {target}")


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--faults", action="store_true", help="only section 5, the faults")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        dsn, schema, runs, count = args.child
        print(MARKER + json.dumps(embedded_child(dsn, schema, int(runs), int(count))), flush=True)
        return
    runs, count, sessions = (300, 1000, 100) if args.quick else (2000, 5000, 300)
    missing = [m for m in ("ray", "psycopg") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"bench/cluster.py: skipped, needs {', '.join(missing)} (extras 'ray', 'postgres')")
        return
    from praxo_actors.testing._postgres import postgres_binaries

    if postgres_binaries() is None:
        print("bench/cluster.py: skipped, needs PostgreSQL's server (Debian: postgresql)")
        return

    import ray
    from _cluster_faults import CHAOS, fault_figures, report

    from praxo_actors.testing._postgres import postgres_server
    from praxo_actors.testing._ray import local_ray_cluster

    print("praxo-actors cluster benchmark")
    print(
        f"  Python {sys.version.split()[0]}, {os.cpu_count()} CPUs ({cpu_model()}), "
        f"ray {ray.__version__}"
    )
    print(f"  {load_note()}")
    other = OtherLoad()
    with postgres_server() as server:
        dsn = server.dsn
        if args.faults:
            with local_ray_cluster(nodes=3, path=[str(HERE), str(CHAOS)]):
                report(fault_figures(server), row)
            print(f"\n  {other.note()}")
            return
        embedded = run_embedded(dsn, f"praxo_bench_{next(_SCHEMAS)}", runs, count)
        with local_ray_cluster(nodes=3, path=[str(HERE), str(CHAOS)]):
            figures = cluster_figures(ray, dsn, runs, count)
            scaling = {h: throughput(ray, dsn, h, sessions) for h in (1, 2, 3)}
            faults = fault_figures(server)

    call = statistics.mean([figures["ray_call_us"], figures["ray_call_us_after"]])
    added = figures["latency_us"] - embedded["latency_us"]
    print(
        f"\n1. One run on a live session, zero-latency model, {runs:,} sequential runs "
        "from a thread"
    )
    row("", "per run", "floor", "ratio", "target")
    row("embedded Runtime, PostgreSQL store", f"{embedded['latency_us']:,.0f} µs")
    row("cluster, one host", f"{figures['latency_us']:,.0f} µs")
    row("embedded, from a coroutine (await arun)", f"{embedded['alatency_us']:,.0f} µs")
    row("inside one host, from a coroutine on Ray's loop", f"{figures['alatency_us']:,.0f} µs")
    row(
        "added by the cluster, in Ray calls",
        f"{added:,.0f} µs",
        f"{call:,.0f} µs",
        f"{added / call:.2f}",
        f"<= {TARGET_CALLS:g} call  {verdict(added <= TARGET_CALLS * call)}",
    )
    print("      floor: a bare Ray actor call round trip (async actor), before and after")

    print(
        f"\n2. One host against the embedded runtime: {count:,} new sessions, one run each, at once"
    )
    row("", "host", "embedded", "ratio", "target")
    rate = embedded["activations_per_s"] / figures["activations_per_s"]
    row(
        "sessions activated per second (inside the host)",
        f"{figures['activations_per_s']:,.0f}/s",
        f"{embedded['activations_per_s']:,.0f}/s",
        f"{rate:.2f}×",
        f"<= {TARGET_HOST:g}×  {verdict(rate <= TARGET_HOST)}",
    )
    rss = figures["rss_kib_per_session"] / embedded["rss_kib_per_session"]
    row(
        "RSS per live idle session",
        f"{figures['rss_kib_per_session']:.2f} KiB",
        f"{embedded['rss_kib_per_session']:.2f} KiB",
        f"{rss:.2f}×",
        f"<= {TARGET_HOST:g}×  {verdict(rss <= TARGET_HOST)}",
    )
    row("the same burst through the cluster's API", f"{figures['through_cluster_per_s']:,.0f}/s")

    print(
        f"\n3. Runs per second, CPU-bound model (2 ms of Python per call), {sessions} "
        "sessions × 2 runs"
    )
    row("", "runs/s", "embedded", "ratio", "PG txn/run")
    for hosts, figure in scaling.items():
        row(
            f"{hosts} host{'s' if hosts > 1 else ''}",
            f"{figure['runs_per_s']:,.0f}",
            f"{embedded['busy_runs_per_s']:,.0f}",
            f"{figure['runs_per_s'] / embedded['busy_runs_per_s']:.2f}×",
            f"{figure['txn_per_run']:.2f}",
        )
    print("      2 cores hold the hosts, the driver, Ray and PostgreSQL: past two hosts there is")
    print("      no core left to add, so the 3-host row shows the machine, not the design")

    one = scaling[1]["runs_per_s"]
    per_gib = 1024 * 1024 / figures["rss_kib_per_session"]
    peak_txn = max(f["txn_per_s"] for f in scaling.values())
    capacity = figures["pg_commits_per_s"]
    need_txn = 100 * one * scaling[1]["txn_per_run"]
    print("\n4. A paper estimate of 100 hosts, from the figures above (not measured)")
    print(f"  live idle sessions per GiB of a host:             {per_gib:>12,.0f}")
    print(f"  sessions 100 hosts hold in 8 GiB each:            {100 * 8 * per_gib:>12,.0f}")
    print(f"  runs/s of 100 one-core hosts, this model:         {100 * one:>12,.0f}")
    print(f"  PostgreSQL transactions/s that needs:             {need_txn:>12,.0f}")
    print(f"  PostgreSQL transactions/s seen in section 3:      {peak_txn:>12,.0f}")
    print(f"  one-row commits/s of this PostgreSQL, 8 clients:  {capacity:>12,.0f}")
    print("  Each host commits its sessions' runs in groups, so transactions per run fall as load")
    print("  rises; one PostgreSQL server is the shared part to size (or shard by session id).")
    report(faults, row)
    print(f"\n  {other.note()}")
    print("  (Ray's processes, PostgreSQL and the embedded child count as other processes here)")


if __name__ == "__main__":
    main()
