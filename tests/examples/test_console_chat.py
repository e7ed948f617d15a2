"""The console chat: a line typed while the agent works interrupts the run in progress."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "console_chat.py"
TIMEOUT = 30.0


def _read_until(process: subprocess.Popen[str], wanted: str) -> list[str]:
    assert process.stdout is not None
    seen = []
    for line in process.stdout:  # bounded: the process is killed by the caller's timeout
        seen.append(line.rstrip("\n"))
        if seen[-1] == wanted:
            return seen
    raise AssertionError(f"no {wanted!r} in {seen}")


def test_typing_while_the_agent_works_interrupts_it() -> None:
    env = {**os.environ, "PRAXO_LOOKUP_SECONDS": "0.3", "PYTHONPATH": os.pathsep.join(sys.path)}
    chat = subprocess.Popen(
        [sys.executable, str(EXAMPLE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert chat.stdin is not None
        chat.stdin.write("what is an actor?\n")
        chat.stdin.flush()
        seen = _read_until(chat, "... looking up: what is an actor?")
        # Typed while the lookup runs; then the end of input.
        out, err = chat.communicate("never mind: what is OTP?\n", timeout=TIMEOUT)
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait(TIMEOUT)
    lines = seen + out.splitlines()
    assert chat.returncode == 0, err
    assert "(interrupted: what is an actor?)" in lines
    assert "agent: answer to never mind: what is OTP?" in lines
    assert lines[-1] == "2 questions in the history"
