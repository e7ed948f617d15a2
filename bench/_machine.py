"""Describe the machine a benchmark runs on: its CPU model and this process's resident memory."""

from __future__ import annotations

import platform
from pathlib import Path

__all__ = ["cpu_model", "rss_bytes"]


def cpu_model() -> str:
    """Return the CPU's model name from ``/proc/cpuinfo``, else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def rss_bytes() -> int:
    """Return this process's resident set size in bytes (``VmRSS``).

    Raises:
        RuntimeError: If ``/proc/self/status`` has no ``VmRSS`` line; a zero would pass for a
            measurement.
    """
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")
