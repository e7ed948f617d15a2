"""Every example ends cleanly on Ctrl-C: no traceback, and exit status 130 (or 0 if it had ended).

Each example runs as a child process; once it prints the line saying it is running (read from
its output, with a timeout, never slept for), the test sends it SIGINT, as Ctrl-C does. An
example still at work exits 130 (128 + SIGINT, the shell's convention for an interrupted
command) after stopping what it started; a short one that had already finished exits 0 (or,
interrupted as the interpreter exits, is ended by the signal, which a shell reports as 130 too).
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TIMEOUT = 60.0
INTERRUPTED = 128 + signal.SIGINT  # 130

# One MCP request, so the stdio server has answered once before it is interrupted.
MCP_INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
)


@dataclass(frozen=True)
class Example:
    """How to run one example until it is at work."""

    script: str
    ready: str  # the start of the line after which it is interrupted
    long_running: bool  # still at work when interrupted: the exit status must be 130
    last: str | None = None  # for a short one: the last line it prints when it ends on its own
    stdin: str = ""
    env: dict[str, str] = field(default_factory=dict)
    port: bool = False  # listens on PORT


CASES = [
    Example("quickstart.py", "parsed echo(", False, last="quickstart: all examples passed"),
    Example("tools_and_memory.py", "     user:", False, last="   output:"),
    Example("event_subscriber.py", "alice: failed", False, last="failure codes:"),
    Example("supervised_beside.py", "Paris: sunny.", False, last="history:"),
    # Interrupted while a run is in flight (its tool is sleeping).
    Example(
        "console_chat.py",
        "... looking up: what is an actor?",
        True,
        stdin="what is an actor?\n",
        env={"PRAXO_LOOKUP_SECONDS": "600"},
    ),
    Example("asgi_service.py", "INFO:     Uvicorn running on", True, port=True),
    Example("fastapi_service.py", "INFO:     Uvicorn running on", True, port=True),
    Example("research_tools.py", '{"jsonrpc":"2.0","id":1,', True, stdin=MCP_INITIALIZE + "\n"),
]


def test_every_runnable_example_is_covered() -> None:
    """A new example with a ``__main__`` block must be added to ``CASES``."""
    runnable = {
        p.name for p in EXAMPLES.glob("*.py") if 'if __name__ == "__main__":' in p.read_text()
    }
    assert runnable == {case.script for case in CASES}


def free_port() -> int:
    """Return a loopback port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def start(case: Example, directory: Path) -> subprocess.Popen[str]:
    env = {
        **{k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"},
        "PYTHONPATH": os.pathsep.join(sys.path),
        "PRAXO_STORE": str(directory / "store.sqlite3"),
        **case.env,
    }
    if case.port:
        env["PORT"] = str(free_port())
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLES / case.script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # a traceback on stderr shows up in the same stream
        text=True,
        env=env,
        cwd=directory,
    )
    assert process.stdin is not None
    process.stdin.write(case.stdin)  # and left open: end of input would end some examples
    process.stdin.flush()
    return process


def read_lines(process: subprocess.Popen[str]) -> tuple[queue.Queue[str | None], threading.Thread]:
    """Return a queue fed with the process's output lines (None at the end of it), and the
    thread feeding it, which closes the output at its end."""
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    stdout = process.stdout

    def pump() -> None:
        with stdout:
            for line in stdout:
                lines.put(line.rstrip("\n"))
        lines.put(None)

    thread = threading.Thread(target=pump, name="example-output", daemon=True)
    thread.start()
    return lines, thread


@pytest.mark.parametrize("case", CASES, ids=[case.script for case in CASES])
def test_ctrl_c_ends_the_example_cleanly(case: Example, tmp_path: Path) -> None:
    process = start(case, tmp_path)
    seen: list[str] = []
    lines, pump = read_lines(process)
    try:
        while True:
            line = lines.get(timeout=TIMEOUT)
            assert line is not None, f"{case.script} ended before {case.ready!r}:\n" + "\n".join(
                seen
            )
            seen.append(line)
            if line.startswith(case.ready):
                break
        process.send_signal(signal.SIGINT)
        status = process.wait(TIMEOUT)
        while (line := lines.get(timeout=TIMEOUT)) is not None:
            seen.append(line)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(TIMEOUT)
        assert process.stdin is not None
        process.stdin.close()
        pump.join(TIMEOUT)
    output = "\n".join(seen)
    for noise in ("Traceback", "KeyboardInterrupt", "CancelledError", "never retrieved"):
        assert noise not in output, f"{case.script} printed {noise!r}:\n{output}"
    assert not re.search(r"^Exception ignored", output, re.M), output
    if case.long_running or status != 0:
        # 130 from the example, or killed by the signal itself when it came as the interpreter
        # was exiting: either way the shell reports 130.
        assert status in (INTERRUPTED, -signal.SIGINT), f"{case.script} exited {status}:\n{output}"
    else:  # it had ended on its own before the signal came
        assert case.last is not None and seen[-1].startswith(case.last), output
