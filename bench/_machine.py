"""Describe the machine a benchmark runs on: its CPU model and this process's resident memory."""

from __future__ import annotations

import os
import platform
from pathlib import Path

__all__ = ["OtherLoad", "cpu_model", "load_note", "rss_bytes"]


def cpu_model() -> str:
    """Return the CPU's model name from ``/proc/cpuinfo``, else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_note() -> str:
    """Return the load averages (a hint of what else ran just before)."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "load average: unknown"
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


class OtherLoad:
    """Measure the CPU time other processes use while a benchmark runs.

    A ratio is only as good as the machine is quiet: on 2 vCPUs, one busy process elsewhere
    roughly doubles the times measured. The machine's busy time (``/proc/stat``) less this
    process's and its waited-for children's (``os.times``) is what others used.
    """

    def __init__(self) -> None:
        self._start = self._sample()

    @staticmethod
    def _sample() -> tuple[float, float, float]:
        ticks = os.sysconf("SC_CLK_TCK")
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
        # user nice system idle iowait irq softirq steal (guest time is inside user)
        busy = sum(fields[:3]) + sum(fields[5:8])
        t = os.times()
        ours = t.user + t.system + t.children_user + t.children_system
        return busy / ticks, ours, t.elapsed

    def note(self) -> str:
        """Return what others used since this object was made, flagged when it is a lot."""
        try:
            busy1, ours1, at1 = self._sample()
        except (OSError, ValueError, IndexError):
            return "CPU used by other processes: unknown"
        busy0, ours0, at0 = self._start
        others = max(0.0, (busy1 - busy0) - (ours1 - ours0))
        share = others / max(1e-9, (at1 - at0) * (os.cpu_count() or 1))
        flag = (
            " - BUSY MACHINE: numbers inflated, run again when it is quiet" if share > 0.1 else ""
        )
        return (
            f"other processes used {others:,.1f} CPU-s meanwhile ({share:.0%} of the machine){flag}"
        )


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
