"""Benchmark the session log and durable runs (not a test).

    python bench/durable.py            # every section (~1 min on 2 vCPUs)
    python bench/durable.py --quick    # smaller sizes, a smoke run of seconds

Sections [targets]:

1. Per-run commit cost against history length (10 … 10,000 messages): the session log's commit
   (record, and a snapshot whenever the records outgrow it: the mean includes those) next to
   0.1's whole-session checkpoint, both on SQLite. [log at 2,000 messages <= 1.5x at 10]
2. ``durable=True`` against ``durable=False``: 100 sessions at once, each run three tool steps,
   SQLite with ``synchronous=FULL``; journal appends per step and store transactions per step.
   [<= 1 append per step, grouped across sessions]
3. Resume of 1,000 pending durable runs after a restart: from ``register_agent`` (with
   ``resume=True``) until the last of them completed. [<= 2 s]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.core import dump_checkpoint
from praxo_actors.memory import SQLiteStore
from praxo_actors.memory._log import SNAPSHOTS, SessionLog
from praxo_actors.models import (
    Request,
    Response,
    RunResult,
    Session,
    ToolCall,
    message_assistant,
    message_user,
)
from praxo_actors.runtime import Runtime
from praxo_actors.runtime._session._restore import LogPosition, run_commit

TEXT = "a sentence of about sixty characters, as a chat turn would be. "


def _history(n: int) -> Session:
    messages = []
    for i in range(n):
        make = message_user if i % 2 == 0 else message_assistant
        messages.append(make(f"{i}: {TEXT}"))
    return Session("s", messages)


def commit_cost(sizes: list[int], commits: int) -> None:
    print(f"\n1. per-run commit cost, {commits} commits per size (SQLite, synchronous=NORMAL)")
    print("   (history at the first commit; each commit adds two messages)")
    print(f"   {'messages':>9} {'log µs':>9} {'0.1 µs':>9} {'log vs 10':>10}")
    base: float | None = None
    warm = True
    with tempfile.TemporaryDirectory() as tmp:
        for i, n in enumerate([sizes[0], *sizes]):  # the first pass warms up, unprinted
            store = SQLiteStore(Path(tmp) / f"{i}-{n}.sqlite3", synchronous="NORMAL")
            log = SessionLog(store)
            # The session as a restore finds it: its history in a snapshot.
            session = _history(n)
            first = run_commit(LogPosition(), Session("s"), RunResult("r", session, ""), None)
            assert log.write([first], []) == [True]
            position = LogPosition(version=1, snapshot_bytes=len(first.snapshot or ""))
            runs = []  # built before timing: the commit is measured, not the run
            for k in range(commits):
                added = [*session.messages, message_user(f"q{k}"), message_assistant(f"a{k}")]
                after = Session("s", added, session.metadata)
                runs.append((session, RunResult(run_id=f"r{k}", session=after, output=f"a{k}")))
                session = after
            started = time.perf_counter()
            for before, result in runs:
                commit = run_commit(position, before, result, None)
                assert log.write([commit], []) == [True]
            log_us = (time.perf_counter() - started) / commits * 1e6
            snapshots = log.load(["s"])[0]
            del runs
            # 0.1: the whole session into its checkpoint, every run.
            session = _history(n)
            sessions = []
            for k in range(commits):
                added = [*session.messages, message_user(f"q{k}"), message_assistant(f"a{k}")]
                session = Session("s", added)
                sessions.append(session)
            started = time.perf_counter()
            for session in sessions:
                store.put(SNAPSHOTS, "old", {"checkpoint": dump_checkpoint(session).decode()})
            old_us = (time.perf_counter() - started) / commits * 1e6
            del sessions
            store.close()
            base = log_us if base is None else base
            if warm:
                warm = False
                continue
            kept = 0 if snapshots is None else len(snapshots.records)
            print(
                f"   {n:>9} {log_us:>9.0f} {old_us:>9.0f} {log_us / base:>9.2f}x"
                f"   ({kept} records since the last snapshot)"
            )


class _CountingStore(SQLiteStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.transactions = 0
        self.journal_rows = 0

    def apply(self, puts: Any, deletes: Any = ()) -> None:
        puts = list(puts)
        self.transactions += 1
        self.journal_rows += sum(1 for ns, _, _ in puts if tuple(ns) == ("praxo", "journal"))
        super().apply(puts, deletes)


def _tool_agent() -> Any:
    async def model(request: Request) -> Response:
        if request.step <= 3:
            return Response(message_assistant("", [ToolCall("look", {"step": request.step})]))
        return Response(message_assistant("done"))

    async def look(args: dict[str, Any]) -> int:
        return int(args["step"])

    return new_agent_options(model, tools=[Tool("look", "", {}, look)])


def durable_cost(sessions: int, rounds: int) -> None:
    print(f"\n2. durable=True vs False: {sessions} sessions x {rounds} runs of 3 tool steps")
    print("   (SQLite, synchronous=FULL; a step = one model call and its tool call)")
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for durable in (False, True, False, True):
            store = _CountingStore(Path(tmp) / f"{durable}-{len(times)}.sqlite3")
            rt = Runtime.start(store, idle_timeout=None, timeout=60.0)
            try:
                rt.register_agent("default", _tool_agent, durable=durable)
                handles = [rt.session(f"s{i}") for i in range(sessions)]
                for h in handles:  # activate first: measure runs, not activation
                    h.run("warm").get(timeout=60)
                store.transactions = store.journal_rows = 0
                started = time.perf_counter()
                for _ in range(rounds):
                    futures = [h.run("go") for h in handles]
                    for f in futures:
                        f.get(timeout=60)
                elapsed = time.perf_counter() - started
            finally:
                rt.stop()
                store.close()
            steps = sessions * rounds * 4
            times.setdefault(durable, []).append(elapsed)
            label = "durable" if durable else "plain  "
            print(
                f"   {label} {elapsed * 1e3:8.0f} ms  journal appends/step "
                f"{store.journal_rows / steps:.2f}  "
                f"transactions/step {store.transactions / steps:.2f}"
            )
    ratio = min(times[True]) / min(times[False])
    print(f"   durable / plain (best of 2): {ratio:.2f}x")


def resume_time(runs: int) -> None:
    print(f"\n3. resume of {runs} pending durable runs after a restart")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.sqlite3"
        held = threading.Semaphore(0)

        def agent(hold: bool) -> Any:
            async def model(request: Request) -> Response:
                if request.step == 1:
                    return Response(message_assistant("", [ToolCall("wait", {})]))
                return Response(message_assistant("done"))

            async def wait(_args: dict[str, Any]) -> str:
                if hold:
                    held.release()
                    await asyncio.sleep(3600)  # cancelled when the runtime stops
                return "ok"

            return lambda: new_agent_options(model, tools=[Tool("wait", "", {}, wait)])

        rt = Runtime.start(path, idle_timeout=None, timeout=60.0)
        try:
            rt.register_agent("default", agent(True), durable=True)
            futures = [rt.session(f"s{i}").run("go") for i in range(runs)]
            for _ in range(runs):
                assert held.acquire(timeout=60)
        finally:
            rt.stop()
        assert all(f.done() for f in futures)
        started = time.perf_counter()
        again = Runtime.start(path, idle_timeout=None, timeout=60.0, resume=True)
        opened = time.perf_counter()
        try:
            done = threading.Semaphore(0)
            again.events.subscribe(lambda _e: done.release(), pattern="run.completed")
            again.register_agent("default", agent(False), durable=True)
            for _ in range(runs):
                assert done.acquire(timeout=60)
            finished = time.perf_counter()
            outputs = [again.session(f"s{i}").history()[-1].content for i in range(0, runs, 97)]
            assert set(outputs) == {"done"}
        finally:
            again.stop()
    print(f"   Runtime.start: {(opened - started) * 1e3:.0f} ms")
    print(f"   register_agent -> {runs} completed: {(finished - opened) * 1e3:.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args()
    q = args.quick
    print("praxo-actors durable benchmark" + (" (--quick sizes)" if q else ""))
    print(f"python {sys.version.split()[0]}; means over many operations")
    commit_cost([10, 100, 1000, 2000] + ([] if q else [10_000]), 100 if q else 1000)
    durable_cost(20 if q else 100, 2 if q else 5)
    resume_time(100 if q else 1000)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
