"""The tutorial's service, saved as its text says, serves over HTTP and keeps its runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from _helpers import python_blocks

from praxo_actors.testing._served import free_port, wait_until_serving

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial" / "index.md"


def service_source() -> str:
    """Return the file the tutorial has its reader save: step 2's agent, step 5's service."""
    blocks = [code for _, code in python_blocks(TUTORIAL.read_text(encoding="utf-8"))]
    service = next(code for code in blocks if "def create_app" in code)
    return blocks[0] + "\n\n" + service


def start(directory: Path, port: int) -> subprocess.Popen[bytes]:
    """Start ``python service.py`` in ``directory``, serving on ``port``."""
    env = {**os.environ, "PORT": str(port), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "service.py"],
        cwd=directory,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def stop(child: subprocess.Popen[bytes]) -> tuple[int, bytes]:
    """Send SIGTERM, as a process manager would; return the exit status and stderr (bounded)."""
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
    try:
        _, stderr = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate(timeout=10)
        raise
    return child.returncode, stderr


def test_the_tutorial_service_serves_a_durable_agent(tmp_path: Path) -> None:
    """A run submitted over HTTP completes, and a restarted service still answers for it."""
    (tmp_path / "service.py").write_text(service_source(), encoding="utf-8")
    port = free_port()
    base = f"http://127.0.0.1:{port}"

    child = start(tmp_path, port)
    try:
        wait_until_serving(child, f"{base}/v1/models")
        answer = httpx.post(
            f"{base}/sessions/dana/runs", json={"input": "Weather in Quito?"}, timeout=10
        )
        assert answer.status_code == 202
        run_id = answer.json()["run_id"]
        run = httpx.get(f"{base}/runs/{run_id}", params={"wait": 10}, timeout=20).json()
        assert run == {
            "run_id": run_id,
            "status": "completed",
            "output": "The forecast: sunny in Quito.",
        }
    finally:
        status, stderr = stop(child)
    assert status == 0, stderr

    child = start(tmp_path, port)  # a new process on the same store
    try:
        wait_until_serving(child, f"{base}/v1/models")
        again = httpx.get(f"{base}/runs/{run_id}", timeout=10)
        assert again.status_code == 200
        assert again.json()["output"] == "The forecast: sunny in Quito."
        unknown = httpx.get(f"{base}/runs/run_unknown", timeout=10)
        assert unknown.status_code == 404
        assert unknown.json()["error"] == "RUNTIME_UNKNOWN_RUN"
    finally:
        status, stderr = stop(child)
    assert status == 0, stderr
