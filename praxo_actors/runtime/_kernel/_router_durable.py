"""The router's part in resumed runs: one resume of an interrupted run at a time, futures for
durable runs resumed from their journal, waiters, waking sessions."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import AgentError
from praxo_actors.models import RunResult
from praxo_actors.runtime._kernel._run_future import RunFuture

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._activation import Activator

__all__ = ["Held", "Resumption"]

# A resume held until the run it resumes is stored: (future, agent, input, deadline, resume).
Held = tuple[RunFuture, str, str, int | None, str | None]


class Resumption:
    """Mixed into :class:`~praxo_actors.runtime._kernel._router.Router` (same thread and state)."""

    live: OrderedDict[str, Any]
    pending: dict[str, RunFuture]
    results: dict[str, RunResult]
    # Resumes of a run whose interruption is committed but not yet stored, by run id.
    held_resumes: dict[str, list[Held]]
    watchers: dict[str, list[Callable[[RunFuture | None], None]]]
    resumed_futures: dict[str, RunFuture]
    activator: Activator
    stopping: bool
    max_live_sessions: int
    counters: Any
    clock: Callable[[], float]

    if TYPE_CHECKING:

        def cancel(self, run_id: str, hard: bool = False) -> bool: ...

        def submit(
            self,
            future: RunFuture,
            agent: str,
            input: str,
            deadline_ns: int | None,
            resume: str | None = None,
        ) -> None: ...

        def _refuse(self, future: RunFuture, error: Any) -> None: ...

        def _evict(self) -> bool: ...

        def _entry(self) -> Any: ...

    def resume_pending_run(
        self,
        future: RunFuture,
        agent: str,
        input: str,
        deadline_ns: int | None,
        resume: str | None,
    ) -> None:
        """Admit a run whose id is pending: a resume of a run that is not waiting for one.

        The router holds one future per run id, so that each caller's future is settled by its
        own run. A resume that finds the run it resumes still running (another resume got there
        first) is refused at once with ``SESSION_NOT_INTERRUPTED``. One that finds the run
        interrupted, its interruption committed but not yet stored (a caller that saw
        ``run.interrupted`` or ``inspect`` before the first future), waits for the store's
        answer and is then admitted as usual.
        """
        run_id = future.run_id
        settling = self.results.get(run_id)  # the run's outcome, its store write on the way
        if resume is not None and settling is not None and settling.status == "interrupted":
            self.held_resumes.setdefault(run_id, []).append(
                (future, agent, input, deadline_ns, resume)
            )
            return
        refused = AgentError(
            "SESSION_NOT_INTERRUPTED", "the run is not waiting: another resume has it", run_id
        )
        self._refuse(future, refused)

    def release_resumes(self, run_id: str, stored: bool) -> None:
        """Admit the resumes held for a run just settled; if its interruption was not stored
        (or the runtime is stopping), refuse them: there is nothing to resume."""
        for future, agent, input, deadline_ns, resume in self.held_resumes.pop(run_id, ()):
            if stored:
                self.submit(future, agent, input, deadline_ns, resume)
            elif self.stopping:
                self._refuse(future, AgentError("RUNTIME_STOPPED", "the runtime stopped", run_id))
            else:
                unstored = "the interruption was not stored: nothing to resume"
                self._refuse(future, AgentError("SESSION_NOT_INTERRUPTED", unstored, run_id))

    def resumed(self, session_id: str, run_id: str) -> None:
        """A session resumes durable run ``run_id`` from its journal: give it a future."""
        future = self.pending.get(run_id)
        entry = self.live.get(session_id)
        if future is None and entry is not None:
            future = RunFuture(run_id, session_id, self.cancel_later)
            entry.runs[run_id] = future
            self.pending[run_id] = future
            self.counters.runs_started += 1
        if future is not None:
            # Kept a while after it ends, for a handle.result that asks in the meantime.
            recent = self.resumed_futures
            recent[run_id] = future
            if len(recent) > 1000:
                del recent[next(iter(recent))]
        if future is not None:
            for watch in self.watchers.pop(run_id, ()):
                watch(future)

    def cancel_later(self, run_id: str) -> bool:
        """``RunFuture.cancel`` for a resumed run (from any thread)."""
        future = self.pending.get(run_id)
        return future is not None and self.cancel(run_id)

    def watch(
        self, session_id: str, run_id: str, found: Callable[[RunFuture | None], None]
    ) -> None:
        """Call ``found(future)`` with the run's future: now if it is pending, else once its
        session resumes it (activating the session); ``found(None)`` if it cannot be."""
        future = self.pending.get(run_id) or self.resumed_futures.get(run_id)
        if future is not None:
            found(future)
            return
        self.watchers.setdefault(run_id, []).append(found)
        if not self.wake(session_id):
            for watch in self.watchers.pop(run_id, ()):
                watch(None)

    def wake(self, session_id: str) -> bool:
        """Activate a session with no run of its own (it resumes a journaled run, if any)."""
        if self.stopping:
            return False
        if session_id in self.live:
            return True
        if len(self.live) >= self.max_live_sessions and not self._evict():
            return False
        entry = self.live[session_id] = self._entry()
        self.activator.activate(session_id, entry)
        return True
