"""Run ids unique across processes and hosts."""

from __future__ import annotations

import itertools
import os
import time

__all__ = ["new_run_id"]


def _fresh_state() -> tuple[str, itertools.count[int]]:
    # 64 random bits per process: two hosts starting in the same nanosecond collide with odds
    # of about 2**-64, and the counter separates ids within one process.
    return os.urandom(8).hex(), itertools.count()


_node, _counter = _fresh_state()


def _reseed_after_fork() -> None:
    # A forked child inherits the parent's random part and counter; without a new random part
    # the two processes would hand out the same ids.
    global _node, _counter
    _node, _counter = _fresh_state()


os.register_at_fork(after_in_child=_reseed_after_fork)


def new_run_id() -> str:
    """Return a new run id: ``run_<time_ns hex>_<per-process random hex>_<counter>``.

    Unique across threads (the counter), processes and hosts (the random part, drawn anew in
    every process and after every ``fork``), and sortable by creation time within a host.
    """
    return f"run_{time.time_ns():x}_{_node}_{next(_counter)}"
