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
