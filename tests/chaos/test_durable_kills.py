"""Durable runs survive SIGKILL: a child process is killed at random points, again and again;
a last one resumes what is left. Nothing acknowledged is lost, no run commits twice, an
``at_most_once`` call is never repeated, and every other repeat is a resume of a call cut off."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

KILLS = int(os.environ.get("PRAXO_DURABLE_KILLS", "50"))
CHILD = Path(__file__).with_name("_durable_child.py")
TIMEOUT = 60.0


def _child(db: Path, logs: Path, mode: str, seed: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(db), str(logs), mode, str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )


# Fifty interpreters start and die: on a machine whose cores are busy elsewhere that takes
# minutes, past the suite's 120 s.
@pytest.mark.timeout(900)
def test_durable_runs_survive_fifty_kills(tmp_path: Path) -> None:
    db, logs = tmp_path / "runs.sqlite3", tmp_path
    rng = random.Random(20261201)
    for kill in range(KILLS):
        child = _child(db, logs, "work", kill)
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
            # Killed at a random point of its runs (model calls, tools, commits).
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=rng.uniform(0.05, 0.5))
            assert child.poll() is None, "the child exited on its own"
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=TIMEOUT)
            child.stdout.close()  # type: ignore[union-attr]
    finish = _child(db, logs, "finish", KILLS)
    out, _ = finish.communicate(timeout=TIMEOUT)
    finish.stdout.close()  # type: ignore[union-attr]
    assert finish.returncode == 0
    report = json.loads(out.strip().splitlines()[-1])
    histories: dict[str, list[list[str]]] = report["histories"]

    acks = [line.split() for line in (logs / "acks.log").read_text().splitlines()]
    assert len(acks) > KILLS  # the children did real work between kills
    users = {sid: [c for role, c in h if role == "user"] for sid, h in histories.items()}
    inputs = {sid: Counter(texts) for sid, texts in users.items()}
    # Every acknowledged run is in its session's history, exactly once.
    for _, sid, _, text in acks:
        assert inputs[sid][text] == 1, (sid, text)
    # No run committed twice, and each exchange is whole: the input, then its answer.
    for sid, history in histories.items():
        assert all(n == 1 for n in inputs[sid].values()), sid
        answers = [c for role, c in history if role == "assistant" and c]
        assert answers == [f"done {text}" for text in users[sid]], sid
    # Every run resumed by the last process ended with a result, not a code.
    assert all(output.startswith("done ") for output in report["resumed"].values())

    effects = [line.split() for line in (logs / "effects.log").read_text().splitlines()]
    # Runs cut off by a kill went on in a later process (their calls span two processes).
    processes: dict[str, set[str]] = defaultdict(set)
    for _, key, _, pid in effects:
        processes[key.split(":")[0]].add(pid)
    resumed = sum(len(pids) > 1 for pids in processes.values())
    assert resumed >= KILLS // 2, resumed
    sends = Counter(key for kind, key, *_ in effects if kind == "send")
    assert sends and max(sends.values()) == 1  # at_most_once: never again
    attempts: dict[str, list[int]] = defaultdict(list)
    for kind, key, *rest in effects:
        if kind == "note":
            attempts[key].append(int(rest[0]))
    # A repeated at_least_once call is a resume's first live call: its attempt grows.
    for key, seen in attempts.items():
        assert seen == sorted(set(seen)), (key, seen)
    repeats = sum(n - 1 for n in Counter(k for kind, k, *_ in effects).values() if n > 1)
    # Each kill cuts off at most one call per session (4 sessions).
    assert repeats <= 4 * KILLS
