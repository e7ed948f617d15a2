"""A throwaway PostgreSQL server on loopback, for tests of :class:`PostgresStore`.

``with local_postgres() as dsn:`` runs ``initdb`` in a temporary directory and starts the
server on 127.0.0.1 on a free port (as the ``postgres`` user when run as root: the server
refuses root), then stops it and removes the directory. It needs the server binaries (Debian:
``apt-get install postgresql``); :func:`postgres_binaries` says whether they are there.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["local_postgres", "postgres_binaries"]


def postgres_binaries() -> Path | None:
    """Return the directory holding ``initdb`` and ``pg_ctl``, or None if not installed."""
    # Debian's server binaries first (its PATH has only wrappers), newest version first.
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    if found and (Path(found).parent / "pg_ctl").exists():
        return Path(found).parent
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def local_postgres(timeout: float = 60.0) -> Iterator[str]:
    """Start a PostgreSQL server on 127.0.0.1; yield its DSN; stop it and remove its files.

    Raises:
        RuntimeError: The binaries are missing, or the server did not start.
    """
    bindir = postgres_binaries()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="praxo-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    as_user: list[str] = []
    if os.geteuid() == 0:  # the server will not run as root
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()

    def run(*args: str) -> None:
        subprocess.run(
            [*as_user, *args], check=True, capture_output=True, text=True, timeout=timeout
        )

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "praxo", "-E", "UTF8")
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {sockets} -c fsync=off"
        log = str(root / "server.log")  # the server's output: never the caller's pipes
        run(str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", log, "-w", "start")
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(root, ignore_errors=True)
        detail = getattr(exc, "stderr", "") or ""
        raise RuntimeError(f"PostgreSQL did not start: {exc}\n{detail}") from None
    try:
        yield f"host=127.0.0.1 port={port} user=praxo dbname=postgres"
    finally:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)
