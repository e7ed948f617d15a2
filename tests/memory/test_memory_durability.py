"""An acknowledged SQLite put survives the writing process being killed."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from praxo_actors.memory import SQLiteStore

WRITER = Path(__file__).with_name("_durable_writer.py")
WANTED = 200
DEADLINE_S = 60.0


def test_acknowledged_puts_survive_sigkill(tmp_path: Path) -> None:
    """Every key the child printed after its put returned is intact after SIGKILL."""
    path = tmp_path / "durable.sqlite3"
    repo = str(Path(__file__).resolve().parents[2])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [repo, os.environ.get("PYTHONPATH")])),
    }
    child = subprocess.Popen(
        [sys.executable, str(WRITER), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            lines.put(line.strip())
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    acknowledged: list[str] = []
    deadline = time.monotonic() + DEADLINE_S
    try:
        while len(acknowledged) < WANTED:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            assert line is not None, f"writer exited early: {child.stderr.read()}"  # type: ignore[union-attr]
            acknowledged.append(line)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        reader.join(timeout=10)
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    # Keys printed after the ones we counted were acknowledged too; drain them.
    while (line := lines.get_nowait()) is not None:
        acknowledged.append(line)

    with SQLiteStore(path) as store:
        missing = [key for key in acknowledged if store.get(("durable",), key) is None]
        assert missing == []
        item = store.get(("durable",), acknowledged[-1])
        assert item is not None
        assert item.value == {"n": len(acknowledged) - 1, "pad": "x" * 100}
