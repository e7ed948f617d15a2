"""Hostile callbacks, each class in a child process hosting a runtime: the child exits, every
run ends with the callback's own exception or a code, the well-behaved sessions are served,
no thread is left, and what was acknowledged survives a restart."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

CHILD = Path(__file__).with_name("_hostile_child.py")
TIMEOUT = 120.0

# What each class of hostile callback makes of its run (as the runtime's docs promise: the
# callback's own exception, unchanged, or the code of what the runtime did about it).
EXPECTED = {
    **{
        f"raise_{k}": f"exc:{t}"
        for k, t in [
            ("keyboard_interrupt", "KeyboardInterrupt"),
            ("system_exit", "SystemExit"),
            ("generator_exit", "GeneratorExit"),
            ("stop_iteration", "StopIteration"),
            ("stop_async_iteration", "StopAsyncIteration"),
            ("memory_error", "MemoryError"),
            ("recursion_error", "RecursionError"),
            ("base_exception", "Hostile"),
        ]
    },
    **{
        f"araise_{k}": f"exc:{t}"
        for k, t in [
            ("keyboard_interrupt", "KeyboardInterrupt"),
            ("system_exit", "SystemExit"),
            ("generator_exit", "GeneratorExit"),
            # Python turns a StopIteration raised in a coroutine into RuntimeError (PEP 479).
            ("stop_iteration", "RuntimeError"),
            ("stop_async_iteration", "StopAsyncIteration"),
            ("memory_error", "MemoryError"),
            ("recursion_error", "RecursionError"),
            ("base_exception", "Hostile"),
        ]
    },
    "not_json": "exc:TypeError",
    "booby": "exc:TypeError",
    "huge": "completed",
    "blocks": "code:AGENT_DEADLINE",
    "never_ends": "code:AGENT_DEADLINE",
    "blocking_get": "code:RUNTIME_BLOCKING_CALL",
    "waits_own_session": "code:AGENT_DEADLINE",
    "thread_raises": "completed",
}


def _child(tmp_path: Path, db: Path, mode: str) -> tuple[int, dict[str, Any]]:
    report = tmp_path / f"{mode}.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(CHILD), str(db), str(report), mode],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        check=False,
    )
    return done.returncode, json.loads(report.read_text())


def test_a_third_of_200_sessions_hostile(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    code, report = _child(tmp_path, db, "mixed")
    assert code == 0
    by_kind: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for kind, outcome in report["outcomes"]:
        by_kind[kind][outcome] += 1
    assert by_kind.pop("ok") == {"completed": 134}  # the others were served throughout
    assert {kind: set(c) for kind, c in by_kind.items()} == {
        kind: {outcome} for kind, outcome in EXPECTED.items()
    }
    assert report["after"] == "completed"
    assert report["threads"] == []  # stop() left no thread of the runtime's
    code, check = _child(tmp_path, db, "check")
    assert code == 0
    kept = {sid: history for sid, history in check["histories"].items() if history}
    assert len(kept) == 134 and all(
        len(history) == 2 for sid, history in kept.items() if sid != "ok0"
    )
    assert kept["ok0"][2:] == ["after", "echo: after"]


def test_a_tool_that_exits_the_process_loses_nothing_acknowledged(tmp_path: Path) -> None:
    db = tmp_path / "x.sqlite3"
    code, report = _child(tmp_path, db, "exit")
    assert code == 3  # os._exit(3), from inside a tool
    assert report["acked"] == ["completed"] * 5
    code, check = _child(tmp_path, db, "check")
    assert code == 0
    assert [check["histories"][f"ok{i}"] for i in range(5)] == [
        [f"m{i}", f"echo: m{i}"] for i in range(5)
    ]


def test_a_tool_that_stops_its_runtime(tmp_path: Path) -> None:
    code, report = _child(tmp_path, tmp_path / "s.sqlite3", "stop")
    assert code == 0
    assert report["hostile"] == "code:RUNTIME_STOPPED"
    assert report["after"] == "code:RUNTIME_STOPPED"
    assert report["threads"] == []
