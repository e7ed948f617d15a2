"""Sample a process with py-spy while a phase runs, and summarise where the time went.

Used by ``bench/runtime.py --profile`` and ``bench/service.py --profile``. py-spy attaches to the
process (``--pid``) for the phase only, so imports, set-up and floors stay out of the profile,
and samples only the thread holding the GIL (``--gil``): where the CPU time of Python goes.
Garbage collection is charged to the frame whose allocation triggered it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from supervisors._pykka_compat import LOOP_FRAME

__all__ = ["Profiler", "print_profile", "summarise_profile"]


class Profiler:
    """Sample process ``pid`` (this one by default) with py-spy during :meth:`phase`.

    Disabled (a no-op) when py-spy is missing or not asked for; ``summaries`` then says why.
    """

    def __init__(self, enabled: bool, pid: int | None = None) -> None:
        self.pid = os.getpid() if pid is None else pid
        self.path = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        self.enabled = enabled and os.access(self.path, os.X_OK)
        self.summaries: dict[str, Any] = {}
        if enabled and not self.enabled:
            self.summaries["note"] = "py-spy not found (pip install py-spy)"

    @contextmanager
    def phase(self, name: str, wanted: bool = True) -> Iterator[None]:
        if not (self.enabled and wanted):
            yield
            return
        with tempfile.TemporaryDirectory() as tmp:
            raw = Path(tmp) / "profile.txt"
            command = [self.path, "record", "--pid", str(self.pid), "--format", "raw"]
            command += ["--gil", "--rate", "250", "--output", str(raw)]
            spy = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            assert spy.stdout is not None
            # py-spy says when it samples; wait for that (bounded) so the phase is covered.
            deadline = time.monotonic() + 10
            for line in spy.stdout:
                if "Sampling process" in line or time.monotonic() > deadline:
                    break
            try:
                yield
            finally:
                spy.send_signal(signal.SIGINT)
                try:
                    spy.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    spy.kill()
                    spy.communicate()
                if raw.exists():
                    self.summaries[name] = summarise_profile(raw.read_text())
                else:
                    self.summaries[name] = {
                        "error": f"py-spy wrote nothing (exit {spy.returncode})"
                    }


# Frames that only carry others (thread bootstraps, the loop's dispatch): not worth a line.
_CARRIERS = (
    "threading.py",
    "asyncio/events.py",
    "asyncio/base_events.py",
    "asyncio/runners.py",
    " (runtime.py)",  # bench/runtime.py
    " (service.py)",
    "<module>",
)


def summarise_profile(raw: str, top: int = 15) -> dict[str, Any]:
    """Return the top self and inclusive frames of py-spy's raw (collapsed-stack) output."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    areas: Counter[str] = Counter()
    parts: Counter[str] = Counter()
    within: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_frame_name(f) for f in stack.split(";")]
        frames = [f for f in frames if f]
        if not frames:
            continue
        total += n
        threads[_thread_of(stack)] += n
        own[frames[-1]] += n
        areas[_area(frames[-1])] += n
        parts[_part(frames[-1])] += n
        for area in {_area(f) for f in frames}:
            within[area] += n
        for frame in set(frames):
            if not any(c in frame for c in _CARRIERS):
                inclusive[frame] += n
    if total == 0:
        return {"samples": 0}

    def share(counter: Counter[str]) -> list[tuple[str, float]]:
        return [(k, round(100 * v / total, 1)) for k, v in counter.most_common(top)]

    return {
        "samples": total,
        "threads": share(threads),
        "areas": share(areas),
        "parts": share(parts),
        "within": share(within),
        "self": share(own),
        "inclusive": share(inclusive),
    }


def _frame_name(frame: str) -> str:
    # "func (path/to/file.py:123)" -> "func (path/to/file.py)"; thread/process labels dropped
    if "(" not in frame or frame.startswith(("process ", "thread ")):
        return ""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rsplit(':', 1)[0].rstrip(')')})"


def _thread_of(stack: str) -> str:
    if "serve_loop (praxo_actors/actors/" in stack:
        return "the runtime's loop thread"
    if not stack.startswith("Thread._bootstrap"):
        return "the main thread"
    if f"{LOOP_FRAME} (pykka/" in stack:
        return "ThreadingActor threads (supervisors, bus, store)"
    return "other threads"


def _area(frame: str) -> str:
    where = frame.rpartition("(")[2]
    for prefix in (
        "praxo_actors/runtime",
        "praxo_actors/actors",
        "praxo_actors/agent",
        "praxo_actors/core",
        "praxo_actors",
        "supervisors",
        "pykka",
        "asyncio",
        "msgspec",
        "uuid",
        "threading",
        "selectors",
        "starlette",
        "uvicorn",
        "h11",
        "json",
    ):
        if where.startswith(prefix):
            return prefix
    return "other"


# The runtime's parts, by the file of the frame running (self time). C code (msgspec's, json's
# encoders, sqlite3) is charged to the Python frame that called it; the protocol module is
# where messages are encoded and decoded.
_PARTS = (
    ("store and session log", ("praxo_actors/runtime/_store", "praxo_actors/memory", "json/")),
    ("scheduler, mailboxes, futures", ("praxo_actors/actors", "pykka", "supervisors")),
    ("asyncio", ("asyncio",)),
    ("session actor", ("praxo_actors/runtime/_session",)),
    ("msgspec (the messages' codec)", ("praxo_actors/runtime/_protocol", "msgspec")),
    ("kernel", ("praxo_actors/runtime/_kernel",)),
    ("front (arun, its future)", ("praxo_actors/runtime/_front",)),
    ("events", ("praxo_actors/runtime/_events",)),
    ("agent loop", ("praxo_actors/agent", "praxo_actors/core", "praxo_actors/models")),
)


def _part(frame: str) -> str:
    where = frame.rpartition("(")[2]
    for name, prefixes in _PARTS:
        if where.startswith(prefixes):
            return name
    return "other (threading, stdlib, the benchmark)"


def print_profile(summary: dict[str, Any], indent: str = "     ") -> None:
    if "error" in summary or summary.get("samples", 0) == 0:
        print(f"{indent}profile: {summary.get('error', 'no samples')}")
        return
    print(f"{indent}py-spy --gil, {summary['samples']:,} samples at 250 Hz of the GIL's holder")
    print(f"{indent}by thread: " + ", ".join(f"{k} {v}%" for k, v in summary["threads"]))
    print(f"{indent}self time by package: " + ", ".join(f"{k} {v}%" for k, v in summary["areas"]))
    if "parts" in summary:
        print(f"{indent}self time by part: " + ", ".join(f"{k} {v}%" for k, v in summary["parts"]))
    print(
        f"{indent}samples with the package on the stack: "
        + ", ".join(f"{k} {v}%" for k, v in summary["within"] if k != "other")
    )
    print(f"{indent}top frames, self time:")
    for name, pct in summary["self"]:
        print(f"{indent}  {pct:5.1f}%  {name}")
    print(f"{indent}top frames, inclusive (beyond the loop's and threads' own dispatch):")
    for name, pct in summary["inclusive"]:
        print(f"{indent}  {pct:5.1f}%  {name}")
