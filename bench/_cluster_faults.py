"""Section 5 of ``bench/cluster.py``: how soon the cluster serves again after each fault.

Each fault strikes a fresh three-host cluster under the fault suite's load (``tests/chaos``:
30 busy sessions, two runs in flight each, half of them durable). Time to serve is from the
fault's end (the kill; the SIGCONT; PostgreSQL accepting connections again) until every busy
session and a fresh session on every host got a run through. The history checker then runs
over every session's log, so a figure never comes from a cluster that lost a run.
"""

from __future__ import annotations

import itertools
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHAOS = Path(__file__).resolve().parent.parent / "tests" / "chaos"
sys.path.insert(0, str(CHAOS))

from _faults import pause_host, restart_postgres, sigkill_host  # noqa: E402
from _history import check  # noqa: E402
from _load import Load, time_to_serve  # noqa: E402

__all__ = ["CHAOS", "TARGET_SERVE", "fault_figures", "report"]

TARGET_SERVE = 10.0  # seconds from a fault's end until the cluster serves again
SESSIONS = 30
PAUSE_SECONDS = 10.0
TIMEOUT = 120.0
_SCHEMAS = itertools.count(1)


def _under(server: Any, fault: Callable[[Any, str], float]) -> dict[str, Any]:
    from praxo_actors.cluster import ClusterRuntime
    from praxo_actors.memory import PostgresStore
    from praxo_actors.runtime import read_session

    schema = f"praxo_bench_faults_{next(_SCHEMAS)}"
    cluster = ClusterRuntime.start(
        server.dsn, hosts=3, schema=schema, idle_timeout=None, timeout=TIMEOUT
    )
    try:
        cluster.register_agent("default", "fault_agents:echo")
        cluster.register_agent("durable", "fault_agents:worker", durable=True)
        sessions = {f"s{i}": "default" if i % 2 else "durable" for i in range(SESSIONS)}
        load = Load(cluster, sessions, timeout=TIMEOUT).start()
        try:
            if not load.acknowledged(3 * SESSIONS, TIMEOUT):
                raise SystemExit("the load did not get going")
            ended = fault(cluster, cluster.host_of("s0"))
            serve = time_to_serve(load, ended, TIMEOUT, TIMEOUT)
        finally:
            load.stop(TIMEOUT)
    finally:
        cluster.stop()
    history = load.history
    store = PostgresStore(server.dsn, schema=schema)
    try:
        logs = {sid: read_session(store, sid).messages for sid in history.sessions}
    finally:
        store.close()
    runs = history.runs()
    return {
        "serve_s": serve,
        "acknowledged": sum(run.acknowledged for run in runs),
        "failures": dict(Counter(getattr(r.error, "code", "?") for r in runs if r.error)),
        "violations": [f"{v.kind} {v.session_id}: {v.detail}" for v in check(history, logs)],
    }


def fault_figures(server: Any) -> dict[str, dict[str, Any]]:
    """Strike each fault on a cluster of its own; return each one's figures."""
    return {
        "a host SIGKILLed": _under(server, lambda c, host: sigkill_host(c, host)[1]),
        f"a host paused {PAUSE_SECONDS:g} s (SIGSTOP, SIGCONT)": _under(
            server, lambda c, host: pause_host(c, host, PAUSE_SECONDS)[1]
        ),
        "PostgreSQL restarted": _under(server, lambda _c, _host: restart_postgres(server)[1]),
    }


def report(figures: dict[str, dict[str, Any]], row: Callable[..., None]) -> None:
    """Print the section (``row`` is ``bench/cluster.py``'s table row)."""
    print(
        f"\n5. Serving again after a fault, {SESSIONS} busy sessions (2 runs in flight each), "
        "3 hosts"
    )
    row("", "to serve", "runs", "failed", f"target <= {TARGET_SERVE:g} s")
    for name, f in figures.items():
        met = f["serve_s"] <= TARGET_SERVE and not f["violations"]
        row(
            name,
            f"{f['serve_s']:.2f} s",
            f"{f['acknowledged']:,}",
            f"{sum(f['failures'].values()):,}",
            f"{'met' if met else 'MISSED'}  {f['failures'] or ''}",
        )
        for violation in f["violations"][:5]:
            print(f"      HISTORY VIOLATION {violation}")
    print("      from the fault's end until every busy session and a fresh session on every")
    print("      host got a run through; every history checked (tests/chaos/_history.py)")
