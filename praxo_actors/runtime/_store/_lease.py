"""One store, one runtime: a runtime holds its store for as long as it runs.

Two runtimes writing one store would overwrite each other's sessions (on 0.1, ``uvicorn
--workers 2`` on one SQLite file lost acknowledged runs). A SQLite store is held with an
exclusive ``flock`` on ``<file>.lock`` beside it: another runtime on that file — in this process
or another — fails at start with ``STORE_LOCKED``, and the kernel releases the lock when the
holder stops or its process dies (nothing stale is left behind). Any other store object is held
for this process: the same object cannot serve two runtimes at once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from praxo_actors._errors import PraxoError
from praxo_actors.codes import STORE_FAILED, STORE_LOCKED

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: only the in-process guard applies
    fcntl = None  # type: ignore[assignment]

__all__ = ["lease"]

_held: set[int] = set()  # id() of the store objects held by a live runtime of this process
_held_lock = threading.Lock()


def lease(store: Any) -> Callable[[], None]:
    """Hold ``store`` for one runtime; return the function that releases it.

    Raises:
        PraxoError: ``STORE_LOCKED`` if another runtime holds it; ``STORE_FAILED`` if the
            lock file cannot be opened or locked.
    """
    key = id(store)
    with _held_lock:
        if key in _held:
            raise PraxoError(STORE_LOCKED, f"{store!r} is held by another runtime")
        _held.add(key)
    path = getattr(store, "path", None)
    try:
        release_file = _lock_file(path) if isinstance(path, str) and path != ":memory:" else None
    except BaseException:
        with _held_lock:
            _held.discard(key)
        raise

    def release() -> None:
        if release_file is not None:
            release_file()
        with _held_lock:
            _held.discard(key)

    return release


def _lock_file(path: str) -> Callable[[], None] | None:
    if fcntl is None:
        return None
    lock_path = f"{path}.lock"
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise PraxoError(STORE_FAILED, f"cannot open the lock file {lock_path}: {exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # for people: who holds it
    except BlockingIOError:
        os.close(fd)
        raise PraxoError(
            STORE_LOCKED,
            f"{path} is held by another runtime (in this process or another: see {lock_path})",
        ) from None
    except OSError as exc:  # e.g. a file system without locks (ENOLCK)
        os.close(fd)
        raise PraxoError(STORE_FAILED, f"cannot lock {lock_path}: {exc}") from None
    except BaseException:
        os.close(fd)
        raise

    def release() -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    return release
