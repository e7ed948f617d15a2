"""The faults the cluster suite strikes, each returning when it ended (``time.monotonic()``).

Shared by ``tests/chaos/test_cluster_faults.py`` and ``bench/cluster.py`` (which measures how
soon the cluster serves again after each).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

__all__ = ["host_pid", "pause_host", "restart_postgres", "sigkill_host"]


def host_pid(cluster: Any, host: str, timeout: float = 120.0) -> int:
    """Return the process id of ``host`` (its Ray actor's worker process)."""
    import ray

    call = cluster._hosts[host].__ray_call__.remote(lambda _host: os.getpid())
    pid: int = ray.get(call, timeout=timeout)
    return pid


def sigkill_host(cluster: Any, host: str) -> tuple[int, float]:
    """SIGKILL ``host``'s process (Ray restarts it); return its pid and when it died."""
    pid = host_pid(cluster, host)
    os.kill(pid, signal.SIGKILL)
    return pid, time.monotonic()


def pause_host(cluster: Any, host: str, seconds: float) -> tuple[float, float]:
    """Stop ``host``'s process (SIGSTOP) for ``seconds``, then resume it (SIGCONT); return
    when the pause began and ended."""
    pid = host_pid(cluster, host)
    os.kill(pid, signal.SIGSTOP)
    began = time.monotonic()
    try:
        # The fault is the pause itself: it lasts this long whatever else happens.
        threading.Event().wait(seconds)
    finally:
        os.kill(pid, signal.SIGCONT)
    return began, time.monotonic()


def restart_postgres(server: Any) -> tuple[float, float]:
    """Restart the PostgreSQL server (``fast``: every connection is cut); return when it went
    down and when it accepted connections again."""
    began = time.monotonic()
    server.restart()
    return began, time.monotonic()


def _size(inbox: Any) -> object:
    size = getattr(inbox, "qsize", None)
    return size() if size is not None else len(getattr(inbox, "_queue", ()) or ())


def host_state(
    cluster: Any, host: str, session_ids: list[str], run_ids: list[str], timeout: float = 30.0
) -> str:
    """Describe, for a failure report, what ``host`` holds of ``session_ids``: its kernel's
    entries and pending runs, and its calls still running (their stacks)."""
    import ray

    def inspect(actor: Any) -> str:
        import asyncio
        import sys

        kernel = actor.runtime._kernel

        def table() -> list[str]:
            lines = []
            for sid in session_ids:
                entry = kernel.table.get(sid)
                if entry is None:
                    lines.append(f"{sid}: no entry")
                    continue
                ref = entry.ref
                runs = [
                    f"{run_id[-6:]} stored={run_id in kernel.runs.stored} "
                    f"result={run_id in kernel.runs.results}"
                    for run_id in entry.runs
                ]
                lines.append(
                    f"{sid}: alive={ref.is_alive() if ref else None} "
                    f"inbox={_size(ref.actor_inbox) if ref else None} runs={runs} "
                    f"backlog={len(entry.backlog or [])}"
                )
            activator = kernel.activator
            lines.append(
                f"activator: reads waiting {len(activator._reads.waiting)}, starts waiting "
                f"{len(activator._starts.waiting)}, queued {len(activator._ids)}"
            )
            store = kernel.store_ref
            if store is not None:
                lines.append(f"store: alive={store.is_alive()} inbox={_size(store.actor_inbox)}")
            reads = activator._reads
            lines.append(
                "reads: "
                + ", ".join(f"{reads.active - sent:.1f} s" for _batch, sent in reads.waiting)
            )
            lines.append(f"pending runs: {len(kernel.runs.pending)}")
            lines.append(f"reloads: {dict(kernel.lifecycle.reloads)}")
            return lines

        out = table if not hasattr(kernel, "call") else None
        try:
            lines = kernel.call(table, timeout=10.0) if out is None else table()
        except Exception as exc:
            lines = [f"the kernel did not answer: {exc!r}"]
        import gc

        for run_id in run_ids:
            try:
                found = repr(actor.runtime.result(run_id, timeout=0))[:100]
            except Exception as exc:
                found = f"{getattr(exc, 'code', type(exc).__name__)}"
            lines.append(f"result of {run_id}: {found}")

        for actor in [o for o in gc.get_objects() if type(o).__name__ == "StoreActor"]:
            lines.append(
                f"store actor: flushes {actor.flushes}, saves {actor.saves}, gathered "
                f"{len(actor._commits)}/{len(actor._appends)}/{len(actor._accepts)}"
            )
        loops = [o for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop)]
        for loop in loops:
            try:
                tasks = asyncio.all_tasks(loop)
            except RuntimeError:
                continue
            lines.append(f"loop {loop!r}: {len(tasks)} tasks")
            for task in tasks:
                chain, found, coro = [], None, task.get_coro()
                while coro is not None:
                    chain.append(getattr(coro, "__qualname__", type(coro).__name__))
                    frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
                    if frame is not None and frame.f_code.co_filename.endswith("_host.py"):
                        found = found or frame
                    coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
                if found is None:
                    if len(lines) < 200:
                        lines.append(f"other task: {' > '.join(chain)}")
                    continue
                sid = found.f_locals.get("session_id")
                lines.append(f"task {sid} {found.f_locals.get('input')}: {' > '.join(chain)}")
        for ident, frame in sys._current_frames().items():
            stack = []
            while frame is not None and len(stack) < 12:
                stack.append(f"{frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}")
                frame = frame.f_back
            if any("praxo_actors" in line for line in stack):
                lines.append(f"thread {ident}:\n  " + "\n  ".join(stack))
        return "\n".join(lines)

    try:
        return str(ray.get(cluster._hosts[host].__ray_call__.remote(inspect), timeout=timeout))
    except Exception as exc:
        return f"{host} did not answer: {exc!r}"


def pg_activity(dsn: str) -> str:
    """Describe, for a failure report, every other connection of the server: its state, what
    it waits for, its query, and the locks it waits on."""
    import psycopg

    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
            rows = conn.execute(
                "SELECT pid, state, wait_event_type, wait_event, backend_xid, "
                "now() - xact_start, pg_blocking_pids(pid), left(query, 120) "
                "FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = "
                "'client backend'"
            ).fetchall()
            locks = conn.execute(
                "SELECT pid, locktype, classid, objid, mode, granted FROM pg_locks "
                "WHERE locktype = 'advisory' ORDER BY granted, pid"
            ).fetchall()
    except Exception as exc:
        return f"the server did not answer: {exc!r}"
    return "\n".join([*map(str, rows), "advisory locks:", *map(str, locks)])
