"""A session's accepted runs: the write that puts a submitted durable run in the store's inbox,
and the runs a restored session finds there, made into starts again.

A deadline is kept in wall-clock time (``time.time_ns``): the runtime's clock is monotonic, and
its readings mean nothing to the next process.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from praxo_actors.memory._inbox import Accept, AcceptedRun
from praxo_actors.memory._log import pending_signed, sign_pending
from praxo_actors.runtime._protocol import AcceptRun, StartRun, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["accept_write", "start_of"]


def accept_write(host: SessionHost, session_id: str, start: StartRun) -> bytes:
    """The store write that puts the submitted run ``start`` in its session's inbox."""
    deadline = None
    if start.deadline_ns is not None:
        deadline = time.time_ns() + start.deadline_ns - host.clock.monotonic_ns()
    run = AcceptedRun(start.run_id, start.agent, start.input, deadline)
    run = sign_pending(run, session_id, host.key)
    return encode(AcceptRun(Accept(session_id, run)))


def start_of(host: SessionHost, session_id: str, run: AcceptedRun) -> StartRun | None:
    """The start of an accepted run the store's inbox holds (None: not signed for this
    session, with a checkpoint key)."""
    if not pending_signed(run, session_id, host.key):
        return None
    deadline = run.deadline_unix_ns
    if deadline is not None:
        deadline = host.clock.monotonic_ns() + deadline - time.time_ns()
    return StartRun(run.run_id, run.agent, run.input, deadline)
