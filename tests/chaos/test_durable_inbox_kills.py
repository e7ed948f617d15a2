"""Accepted is durable across SIGKILL: submitted runs queued behind a running one, and an
approval-gated run cut off in its first model call, go on in the next process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from _inbox_agents import Agents

from praxo_actors.runtime import Runtime

CHILD = Path(__file__).with_name("_inbox_child.py")
TIMEOUT = 60.0


def _killed_after_submits(db: Path, mode: str) -> list[str]:
    """Run the child until its submits are acknowledged, SIGKILL it; return the ids."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CHILD.parent), *sys.path])}
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(db), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    ids: list[str] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.strip() == "ready":
                break
            ids.append(line.strip())
        assert child.poll() is None, "the child exited on its own"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=TIMEOUT)
        child.stdout.close()  # type: ignore[union-attr]
    return ids


def test_queued_submitted_runs_survive_a_sigkill(tmp_path: Path) -> None:
    """Every acknowledged run runs once, in submission order, in the next process."""
    db = tmp_path / "runs.sqlite3"
    ids = _killed_after_submits(db, "queued")
    assert len(ids) == 4
    agents = Agents()
    with Runtime.start(db, idle_timeout=None, timeout=TIMEOUT, resume=True) as rt:
        rt.register_agent("default", agents.agent, durable=True)
        handle = rt.session("s")
        outputs = [handle.result(run_id, timeout=TIMEOUT).output for run_id in ids]
        history = [str(m.content) for m in handle.history(timeout=TIMEOUT) if m.role == "user"]
    assert outputs == ["done first", "done m0", "done m1", "done m2"]
    assert history == ["first", "m0", "m1", "m2"]
    assert agents.calls == Counter({"first": 1, "m0": 1, "m1": 1, "m2": 1})


def test_an_approval_cut_off_by_a_sigkill_resumes_under_its_own_id(tmp_path: Path) -> None:
    """Killed in its first model call, the run waits for its approval in the next process;
    resume(True) completes it under its id and the session serves on."""
    db = tmp_path / "runs.sqlite3"
    (run_id,) = _killed_after_submits(db, "approval")
    agents = Agents()
    with Runtime.start(db, idle_timeout=None, timeout=TIMEOUT, resume=True) as rt:
        rt.register_agent("default", agents.agent, durable=True)
        handle = rt.session("s")
        waiting = handle.result(run_id, timeout=TIMEOUT)
        assert waiting.status == "interrupted" and waiting.run_id == run_id
        assert rt.inspect("s").agent == "default"
        resumed = handle.resume(True)
        done = resumed.get(timeout=TIMEOUT)
        assert done.output == 'done "sent"' and done.run_id == resumed.run_id == run_id
        assert agents.sent == [{"to": "ada"}]
        assert handle.run("next").get(timeout=TIMEOUT).output == "done next"
