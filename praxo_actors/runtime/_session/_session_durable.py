"""The part of a session actor that journals a durable run and resumes one from its journal."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import AgentError, CheckpointError
from praxo_actors.agent import start_run
from praxo_actors.agent._report import RunInterrupted
from praxo_actors.agent._run import resume_run
from praxo_actors.memory._log import PendingRun, pending_signed
from praxo_actors.models import Session
from praxo_actors.runtime._session._durable import MAX_RESUMES, DurableRun
from praxo_actors.runtime._session._session_calls import Run

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["DurableSteps"]


class DurableSteps:
    """Hold a durable run's next move until the store has its journal entry; resume runs."""

    host: SessionHost
    session_id: str
    session: Session | None
    current: Run | None
    _resumed: set[str] | None

    if TYPE_CHECKING:  # provided by the session actor and CallbackSteps

        def _advance(self, current: Run, ok: bool, value: Any, first: bool = False) -> None: ...

        def _dispatch(self, current: Run, fn: Any, *args: Any, var: Any = None) -> None: ...

        def _failed(self, run_id: str, error: BaseException, journal: int = -1) -> None: ...

        def _to_store(self, message: bytes, run_id: str | None = None) -> None: ...

    def _resumed_event(self, current: Run, durable: DurableRun) -> None:
        event = durable.resumed_event()
        if event is not None:
            current.add_event(event)

    def _journal(self, current: Run, write: bytes | None, move: tuple[Any, ...]) -> None:
        """Send a journal write; make ``move`` once the store has it (at once if no write)."""
        if write is None:  # a value that is not JSON: nothing to keep, the run fails on it
            self._move(current, move)
            return
        current.held = move
        self._to_store(write)

    def _journaled(self, run_id: str, entries: int) -> None:
        current = self.current
        if current is None or current.held is None or current.durable is None:
            return
        if current.run.run_id != run_id or entries not in (current.durable.entries, -1, -2):
            return
        move, current.held = current.held, None
        if entries == -1:
            error = RunInterrupted("STORE_FAILED", "the run's journal was not stored", run_id)
            self._advance(current, False, error)
        elif entries == -2:  # the store actor's SKIPPED: the log no longer holds this run as
            # pending (another host took the session over, and committed it or began another)
            error = RunInterrupted("SESSION_CONFLICT", "the run is no longer pending", run_id)
            self._advance(current, False, error)
        else:
            self._move(current, move)

    def _move(self, current: Run, move: tuple[Any, ...]) -> None:
        if move[0] == "advance":
            self._advance(current, move[1], move[2])
        elif move[0] == "start":
            self._advance(current, True, None, first=True)
        else:
            _, fn, args, var = move
            self._dispatch(current, fn, *args, var=var)

    def _resume(self, pending: PendingRun, journal: list[str]) -> None:
        """Start again the durable run the store holds, answering its effects from the journal."""
        host = self.host
        run_id = pending.run_id
        host.post(host.router.resumed, self.session_id, run_id)
        if self._resumed is None:
            self._resumed = set()
        self._resumed.add(run_id)
        if not pending_signed(pending, self.session_id, host.key):
            # Written without the key (or for another session): not this session's run.
            forged = CheckpointError("CHECKPOINT_SIGNATURE", "the pending run is not signed")
            self._failed(run_id, forged, pending.entries)
            return
        if pending.resumes >= MAX_RESUMES:
            error = AgentError("SESSION_CRASHED", f"cut off {pending.resumes + 1} times", run_id)
            self._failed(run_id, error, pending.entries)
            return
        assert self.session is not None
        try:
            options = host.options_for(pending.agent, host.has_subscribers(), self)
            if pending.resume is None:
                run = start_run(options, self.session, pending.input, run_id=run_id)
            else:
                run = resume_run(options, self.session, _resume_value(pending.resume))
        except Exception as exc:
            self._failed(run_id, exc, pending.entries)
            return
        durable = DurableRun(
            self.session_id,
            run_id,
            pending.agent,
            pending.input,
            host.key,
            journal,
            resumes=pending.resumes + 1,
            resume=pending.resume,
        )
        current = self.current = Run(run=run, agent=pending.agent, deadline_ns=None)
        current.durable = durable
        # The resume is counted in the store before anything runs again, so a call made again
        # knows its attempt even when this process dies too.
        self._journal(current, durable.marker(), ("start",))


def _resume_value(document: str) -> object:
    """The resume value a pending run keeps (JSON); a broken one is a broken log."""
    try:
        return json.loads(document)
    except (ValueError, TypeError, RecursionError):
        raise CheckpointError(
            "CHECKPOINT_INVALID", "the pending run's resume value is not JSON"
        ) from None
