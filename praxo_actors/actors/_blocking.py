"""Refuse blocking waits on a thread that runs actors on an event loop (the loop's thread)."""

from __future__ import annotations

import threading

from praxo_actors._errors import PraxoError
from praxo_actors.codes import RUNTIME_BLOCKING_CALL

__all__ = ["check_not_blocking", "forbid_blocking"]

_local = threading.local()


def forbid_blocking(delta: int) -> None:
    """Count (``+1``) or uncount (``-1``) an owner whose actors run on the calling thread.

    While one does, a blocking wait here (an unfinished future's ``get()``, :func:`blocking`)
    raises ``RUNTIME_BLOCKING_CALL``: it would wait for work that only this thread can do.
    """
    _local.no_block = getattr(_local, "no_block", 0) + delta


def check_not_blocking(what: str) -> None:
    """Raise ``RUNTIME_BLOCKING_CALL`` on a thread that runs an owner's actors (see above).

    Raises:
        PraxoError: ``RUNTIME_BLOCKING_CALL``.
    """
    if getattr(_local, "no_block", 0):
        raise PraxoError(
            RUNTIME_BLOCKING_CALL,
            f"{what} on the runtime's event loop thread would deadlock it: "
            "await the future instead (or call from another thread)",
        )
