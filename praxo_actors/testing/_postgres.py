"""A throwaway PostgreSQL server on loopback, for tests of :class:`PostgresStore`.

``with local_postgres() as dsn:`` runs ``initdb`` in a temporary directory and starts the
server on 127.0.0.1 on a free port (as the ``postgres`` user when run as root: the server
refuses root), then stops it and removes the directory. ``with postgres_server() as server:``
does the same and yields a :class:`PostgresServer`, whose ``stop``, ``start`` and ``restart``
take the server down and up again on the same port and data (to test what a client does while
its database restarts). It needs the server binaries (Debian: ``apt-get install postgresql``);
:func:`postgres_binaries` says whether they are there.
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
from typing import Literal

__all__ = ["PostgresServer", "local_postgres", "postgres_binaries", "postgres_server"]

StopMode = Literal["smart", "fast", "immediate"]


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


class PostgresServer:
    """A server in a directory of its own: its DSN, and commands to stop and start it.

    Made by :func:`postgres_server`; ``stop`` and ``start`` keep the data and the port, so a
    client's DSN stays valid across a restart. Each command waits for the server (``pg_ctl -w``)
    at most ``timeout`` seconds.
    """

    def __init__(self, bindir: Path, root: Path, port: int, timeout: float) -> None:
        self.root = root
        self.port = port
        self.dsn = f"host=127.0.0.1 port={port} user=praxo dbname=postgres"
        self._bindir = bindir
        self._data = root / "data"
        self._timeout = timeout
        self._as_user: list[str] = []
        if os.geteuid() == 0:  # the server will not run as root
            self._as_user = ["runuser", "-u", "postgres", "--"]
        self.running = False

    def _run(self, *args: str) -> None:
        subprocess.run(
            [*self._as_user, *args],
            check=True,
            capture_output=True,
            text=True,
            timeout=self._timeout,
        )

    def _init(self) -> None:
        sockets = self.root / "sockets"
        sockets.mkdir()
        if self._as_user:
            shutil.chown(self.root, "postgres")
            shutil.chown(sockets, "postgres")
        initdb = str(self._bindir / "initdb")
        try:
            self._run(initdb, "-D", str(self._data), "-A", "trust", "-U", "praxo", "-E", "UTF8")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            detail = getattr(exc, "stderr", "") or ""
            raise RuntimeError(f"PostgreSQL did not start: {exc}\n{detail}") from None

    def start(self) -> None:
        """Start the server (the first time, create its data) and wait until it accepts
        connections.

        Raises:
            RuntimeError: The server did not start within the timeout.
        """
        if not self._data.exists():
            self._init()
        sockets = self.root / "sockets"
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {sockets} -c fsync=off"
        log = str(self.root / "server.log")  # the server's output: never the caller's pipes
        try:
            self._run(
                str(self._bindir / "pg_ctl"), "-D", str(self._data), "-o", options, "-l", log,
                "-w", "start",
            )  # fmt: skip
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            detail = getattr(exc, "stderr", "") or ""
            raise RuntimeError(f"PostgreSQL did not start: {exc}\n{detail}") from None
        self.running = True

    def stop(self, mode: StopMode = "fast") -> None:
        """Stop the server (``fast``: its clients' connections are cut) and wait until it has.

        Raises:
            RuntimeError: The server did not stop within the timeout.
        """
        try:
            self._run(str(self._bindir / "pg_ctl"), "-D", str(self._data), "-m", mode, "-w", "stop")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            detail = getattr(exc, "stderr", "") or ""
            raise RuntimeError(f"PostgreSQL did not stop: {exc}\n{detail}") from None
        self.running = False

    def restart(self, mode: StopMode = "fast") -> None:
        """Stop the server, then start it again on the same port and data."""
        self.stop(mode)
        self.start()


@contextlib.contextmanager
def postgres_server(timeout: float = 60.0) -> Iterator[PostgresServer]:
    """Start a PostgreSQL server on 127.0.0.1; yield its handle; stop it and remove its files.

    Raises:
        RuntimeError: The binaries are missing, or the server did not start.
    """
    bindir = postgres_binaries()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="praxo-pg-"))
    server = PostgresServer(bindir, root, _free_port(), timeout)
    try:
        server.start()
        yield server
    finally:
        if server.running:
            with contextlib.suppress(RuntimeError):
                server.stop()
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def local_postgres(timeout: float = 60.0) -> Iterator[str]:
    """Start a PostgreSQL server on 127.0.0.1; yield its DSN; stop it and remove its files.

    Raises:
        RuntimeError: The binaries are missing, or the server did not start.
    """
    with postgres_server(timeout) as server:
        yield server.dsn
