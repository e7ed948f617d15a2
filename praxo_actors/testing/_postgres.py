"""A throwaway PostgreSQL server on loopback, for tests of :class:`PostgresStore`.

``with local_postgres() as dsn:`` runs ``initdb`` in a temporary directory and starts the
server on 127.0.0.1 on a free port (as the ``postgres`` user when run as root: the server
refuses root), then stops it and removes the directory. :class:`LocalPostgres` is the same
server as an object that a test can also stop and start again (a restart under load). It needs
the server binaries (Debian: ``apt-get install postgresql``); :func:`postgres_binaries` says
whether they are there.
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

__all__ = ["LocalPostgres", "local_postgres", "postgres_binaries"]


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


class LocalPostgres:
    """A throwaway PostgreSQL server on 127.0.0.1 that a test can stop and start again.

    ``start()`` runs ``initdb`` the first time; ``stop()`` shuts the server down (``fast``:
    every client's connection is cut, as in a real restart); ``restart()`` does both; ``close()``
    stops it and removes its files. The port stays the same, so a client's DSN stays valid.

    Args:
        timeout: Seconds each ``initdb`` / ``pg_ctl`` call may take.

    Raises:
        RuntimeError: The binaries are missing (from the constructor), or the server did not
            start (from ``start``).
    """

    def __init__(self, timeout: float = 60.0) -> None:
        bindir = postgres_binaries()
        if bindir is None:
            raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
        self._bindir = bindir
        self._timeout = timeout
        self._root = Path(tempfile.mkdtemp(prefix="praxo-pg-"))
        self._data, self._sockets = self._root / "data", self._root / "sockets"
        self._sockets.mkdir()
        self._as_user: list[str] = []
        if os.geteuid() == 0:  # the server will not run as root
            shutil.chown(self._root, "postgres")
            shutil.chown(self._sockets, "postgres")
            self._as_user = ["runuser", "-u", "postgres", "--"]
        self.port = _free_port()
        self.dsn = f"host=127.0.0.1 port={self.port} user=praxo dbname=postgres"
        self.running = False

    def _run(self, *args: str) -> None:
        subprocess.run(
            [*self._as_user, *args],
            check=True,
            capture_output=True,
            text=True,
            timeout=self._timeout,
        )

    def start(self) -> None:
        """Start the server (creating its data directory the first time); wait until it is up.

        Raises:
            RuntimeError: The server did not start.
        """
        try:
            if not self._data.exists():
                initdb = str(self._bindir / "initdb")
                self._run(initdb, "-D", str(self._data), "-A", "trust", "-U", "praxo", "-E", "UTF8")
            options = (
                f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self._sockets} -c fsync=off"
            )
            log = str(self._root / "server.log")  # the server's output: never the caller's pipes
            pg_ctl = str(self._bindir / "pg_ctl")
            self._run(pg_ctl, "-D", str(self._data), "-o", options, "-l", log, "-w", "start")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            detail = getattr(exc, "stderr", "") or ""
            raise RuntimeError(f"PostgreSQL did not start: {exc}\n{detail}") from None
        self.running = True

    def stop(self) -> None:
        """Stop the server, cutting every client's connection; wait until it is down."""
        if not self.running:
            return
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self._run(
                str(self._bindir / "pg_ctl"), "-D", str(self._data), "-m", "fast", "-w", "stop"
            )
        self.running = False

    def restart(self) -> None:
        """Stop the server and start it again on the same port."""
        self.stop()
        self.start()

    def close(self) -> None:
        """Stop the server and remove its files."""
        self.stop()
        shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self) -> LocalPostgres:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


@contextlib.contextmanager
def local_postgres(timeout: float = 60.0) -> Iterator[str]:
    """Start a PostgreSQL server on 127.0.0.1; yield its DSN; stop it and remove its files.

    Raises:
        RuntimeError: The binaries are missing, or the server did not start.
    """
    with LocalPostgres(timeout) as server:
        yield server.dsn
