"""The pending runs: their futures, the results awaiting the store, and refusals.

Owned by the :class:`~praxo_actors.runtime._kernel._kernel.Kernel`, on the loop thread. Every
run is settled exactly once: :meth:`RunBook.take` hands out a pending run's future once.
"""

from __future__ import annotations

import copy
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pykka

from praxo_actors._errors import PraxoError
from praxo_actors.actors._checks import loop_owned
from praxo_actors.models import RunResult
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._kernel._statistics import Counters

__all__ = ["REFUSED_KEPT", "RunBook", "fail", "own"]

# How many refused runs ``handle.result`` still answers with their refusal (a few hundred bytes
# each: the future and its error).
REFUSED_KEPT = 1000


@loop_owned
class RunBook:
    """The runs admitted and not yet settled, and what each still waits for."""

    def __init__(self, counters: Counters) -> None:
        self.counters = counters
        self.pending: dict[str, RunFuture] = {}
        # The last REFUSED_KEPT runs refused at admission: never started, so never in the
        # store, yet a submitted run's refusal is what ``handle.result(run_id)`` answers.
        self.refused: OrderedDict[str, RunFuture] = OrderedDict()
        # Completed runs whose commit the store has not yet acknowledged. Kept here, not per
        # session: the run is committed, so its outcome is the store's even if its session stops.
        self.results: dict[str, RunResult] = {}
        # Runs whose commit the store acknowledged before their result reached the loop: a
        # session on a scheduler thread posts its result to the loop and tells the in-memory
        # store, whose actor may run on the loop first. The result settles them on arrival.
        self.stored: set[str] = set()
        # Encoded StartRun of each pending run of a durable agent: sent again if its session
        # crashes (a run already journaled resumes instead; the session ignores the repeat).
        self.starts: dict[str, bytes] = {}
        self.retries: dict[str, int] = {}
        # Callbacks waiting for a submitted durable run's first journal write (handle.submit).
        self.journal_acks: dict[str, Callable[[int], None]] = {}

    def admit(self, future: RunFuture) -> None:
        """Count a run as started and pending."""
        self.pending[future.run_id] = future
        self.counters.runs_started += 1

    def refuse(self, future: RunFuture, error: PraxoError) -> None:
        """Fail a run that was never admitted (it counts as refused)."""
        self.counters.runs_refused += 1
        fail(future, error)
        self.refused[future.run_id] = future
        if len(self.refused) > REFUSED_KEPT:
            self.refused.popitem(last=False)

    def take(self, run_id: str, completed: bool) -> RunFuture | None:
        """Remove a pending run and count how it ended; None if it is not pending."""
        future = self.pending.pop(run_id, None)
        if future is None:
            return None
        if self.starts:
            self.starts.pop(run_id, None)
            self.retries.pop(run_id, None)
        if completed:
            self.counters.runs_completed += 1
        else:
            self.counters.runs_failed += 1
        return future

    def known(self, run_id: str) -> RunFuture | None:
        """Return the future of a pending or recently refused run."""
        return self.pending.get(run_id) or self.refused.get(run_id)


def own(error: PraxoError) -> PraxoError:
    """Return a copy of ``error`` for one future (same class, code, message and cause).

    One object raised into many futures would gain a traceback frame with each raise: a batch
    of 500 sessions failing at once left 500 frames on every future's error.
    """
    fresh = copy.copy(error)  # through PraxoError.__reduce__: a new object, no traceback
    fresh.__cause__ = error.__cause__
    return fresh


def fail(future: pykka.Future[Any], error: BaseException) -> None:
    """Fail ``future`` with ``error`` (raised once, so that it carries a traceback)."""
    try:
        raise error
    except BaseException:
        future.set_exception(sys.exc_info())
