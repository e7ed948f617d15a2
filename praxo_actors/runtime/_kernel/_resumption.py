"""The kernel's part in resumed runs: one resume of an interrupted run at a time, futures for
durable runs resumed from their journal, and callers waiting for such a run."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from praxo_actors._errors import AgentError
from praxo_actors.actors._checks import loop_owned
from praxo_actors.codes import RUNTIME_STOPPED, SESSION_NOT_INTERRUPTED
from praxo_actors.runtime._kernel._run_future import RunFuture

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["Held", "Resumption"]

# A resume held until the run it resumes is stored: (future, agent, input, deadline, resume).
Held = tuple[RunFuture, str, str, int | None, str | None]
Found = Callable[[RunFuture | None], None]

_RESUMED_KEPT = 1000  # futures of resumed runs kept after they end, for a late handle.result


@loop_owned
class Resumption:
    """Owned by the kernel, on the loop thread: resumes held, resumed runs, their watchers."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        # Resumes of a run whose interruption is committed but not yet stored, by run id.
        self.held: dict[str, list[Held]] = {}
        self.watchers: dict[str, list[Found]] = {}
        self.futures: dict[str, RunFuture] = {}

    def pending_run(
        self,
        future: RunFuture,
        agent: str,
        input: str,
        deadline_ns: int | None,
        resume: str | None,
    ) -> None:
        """Admit a run whose id is pending: a resume of a run that is not waiting for one.

        The kernel holds one future per run id, so that each caller's future is settled by its
        own run. A resume that finds the run it resumes still running (another resume got there
        first) is refused at once with ``SESSION_NOT_INTERRUPTED``. One that finds the run
        interrupted, its interruption committed but not yet stored (a caller that saw
        ``run.interrupted`` or ``inspect`` before the first future), waits for the store's
        answer and is then admitted as usual.
        """
        run_id = future.run_id
        settling = self.kernel.runs.results.get(run_id)  # its outcome, its write on the way
        if resume is not None and settling is not None and settling.status == "interrupted":
            self.held.setdefault(run_id, []).append((future, agent, input, deadline_ns, resume))
            return
        refused = AgentError(
            SESSION_NOT_INTERRUPTED, "the run is not waiting: another resume has it", run_id
        )
        self.kernel.runs.refuse(future, refused)

    def release(self, run_id: str, stored: bool) -> None:
        """Admit the resumes held for a run just settled; if its interruption was not stored
        (or the runtime is stopping), refuse them: there is nothing to resume."""
        kernel = self.kernel
        for future, agent, input, deadline_ns, resume in self.held.pop(run_id, ()):
            if stored:
                kernel.submit(future, agent, input, deadline_ns, resume)
            elif kernel.stopping:
                kernel.runs.refuse(future, AgentError(RUNTIME_STOPPED, "stopped", run_id))
            else:
                unstored = "the interruption was not stored: nothing to resume"
                kernel.runs.refuse(future, AgentError(SESSION_NOT_INTERRUPTED, unstored, run_id))

    def resumed(self, session_id: str, run_id: str) -> None:
        """A session resumes durable run ``run_id`` from its journal: give it a future."""
        kernel = self.kernel
        future = kernel.runs.pending.get(run_id)
        entry = kernel.table.get(session_id)
        if future is None and entry is not None:
            future = RunFuture(run_id, session_id, kernel.request_cancel)
            entry.add_run(run_id)
            kernel.runs.admit(future)
        if future is None:
            return
        # Kept a while after it ends, for a handle.result that asks in the meantime.
        self.futures[run_id] = future
        if len(self.futures) > _RESUMED_KEPT:
            del self.futures[next(iter(self.futures))]
        for watch in self.watchers.pop(run_id, ()):
            watch(future)

    def watch(self, session_id: str, run_id: str, found: Found) -> None:
        """Call ``found(future)`` with the run's future: now if it is pending, else once its
        session resumes it (activating the session); ``found(None)`` if it cannot be."""
        future = self.kernel.runs.pending.get(run_id) or self.futures.get(run_id)
        if future is not None:
            found(future)
            return
        self.watchers.setdefault(run_id, []).append(found)
        if not self.kernel.wake(session_id):
            for watch in self.watchers.pop(run_id, ()):
                watch(None)
