"""A real llama-server on loopback, serving a real small model, for the real-model tests.

``scripts/real_model.sh`` provides both (from PyPI only) and caches them; the tests find them
through ``PRAXO_LLAMA_SERVER`` and ``PRAXO_GGUF_MODEL``, else in that script's cache folder.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ALIAS = "qwen2.5-coder-0.5b-instruct"
READY_TIMEOUT = 120.0  # a cold start on a busy machine; ~3 s on a quiet one
_SETUP = "run scripts/real_model.sh (it prints the PRAXO_LLAMA_SERVER and PRAXO_GGUF_MODEL to set)"


def _cache() -> Path:
    if os.environ.get("PRAXO_CACHE"):
        return Path(os.environ["PRAXO_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "praxo-actors"


def find() -> tuple[Path | None, Path | None, str]:
    """Return the server's and the model's paths (None where missing) and what is missing."""
    server = os.environ.get("PRAXO_LLAMA_SERVER")
    model = os.environ.get("PRAXO_GGUF_MODEL")
    server_path = Path(server) if server else _cache() / "llama-server/0.94.0/llama-server"
    model_path = (
        Path(model) if model else _cache() / "models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    )
    missing = []
    if not os.access(server_path, os.X_OK):
        missing.append(f"no llama-server at {server_path}")
    if not model_path.is_file():
        missing.append(f"no model at {model_path}")
    reason = "; ".join(missing) + (f": {_SETUP}" if missing else "")
    return (
        server_path if not missing else None,
        model_path if not missing else None,
        reason,
    )


@dataclass
class LlamaServer:
    """A running llama-server: its OpenAI-compatible base URL and its log."""

    base_url: str
    log: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return bool(reply.status == 200)
    except (OSError, urllib.error.URLError):
        return False


@contextlib.contextmanager
def running(server: Path, model: Path, log: Path) -> Iterator[LlamaServer]:
    """Start ``server`` on a free loopback port, wait (bounded) for ``/health``, stop it after."""
    port = _free_port()
    command = [
        str(server), "-m", str(model), "--alias", ALIAS, "--host", "127.0.0.1",
        "--port", str(port), "--jinja", "-c", "4096", "-np", "1", "-t", "2",
    ]  # fmt: skip
    # PASSIVE: OpenMP threads that spin while idle starve generation on a busy machine
    # (0.7 -> 9-14 tokens/s measured with -t 2).
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            _wait_healthy(process, f"http://127.0.0.1:{port}/health", log)
            yield LlamaServer(f"http://127.0.0.1:{port}/v1", log)
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def _wait_healthy(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    pause = threading.Event()  # never set: a bounded pause between looks at /health
    deadline = time.monotonic() + READY_TIMEOUT
    while not _healthy(url):
        if process.poll() is not None:
            raise RuntimeError(f"llama-server exited ({process.returncode}): {_tail(log)}")
        if time.monotonic() >= deadline:
            raise RuntimeError(f"llama-server not ready after {READY_TIMEOUT} s: {_tail(log)}")
        pause.wait(0.2)


def _tail(log: Path) -> str:
    with log.open("rb") as handle:
        return _last(handle)


def _last(handle: IO[bytes], size: int = 2000) -> str:
    handle.seek(0, os.SEEK_END)
    handle.seek(max(0, handle.tell() - size))
    return handle.read().decode("utf-8", "replace")
