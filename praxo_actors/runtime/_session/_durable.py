"""One durable run's journal inside its session actor: the writes to the store.

A durable run journals each completed effect before the machine takes its next step (the
session holds the outcome until the store acknowledges it with ``Journaled``). A resumed run is
replayed by the rules every driver shares (:mod:`praxo_actors.agent._replay`); this module adds
only what the session writes: each entry with the run's pending record, and the resume count.
"""

from __future__ import annotations

import json
from typing import Any

from praxo_actors._errors import CheckpointError
from praxo_actors.agent._effects import CallTool, Effect
from praxo_actors.agent._replay import Replay
from praxo_actors.codes import CHECKPOINT_INVALID
from praxo_actors.memory._log import JournalAppend, PendingRun, sign_pending
from praxo_actors.runtime._protocol import JournalEffect, encode

__all__ = ["MAX_RESUMES", "DurableRun", "resume_value"]

MAX_RESUMES = 3
"""A run resumed this many times and cut off again fails ``SESSION_CRASHED`` (a crash loop)."""


class DurableRun(Replay):
    """The journal of the run in flight of a durable agent (owned by its session actor)."""

    __slots__ = ("accepted", "agent", "input", "resume")

    def __init__(
        self,
        session_id: str,
        run_id: str,
        agent: str,
        input: str,
        key: bytes | None,
        journal: list[str] | None = None,
        resumes: int = 0,
        resume: str | None = None,
    ) -> None:
        super().__init__(session_id, run_id, key, journal, resumes)
        self.resume = resume
        self.agent = agent
        self.input = input
        self.accepted = False  # from the session's inbox: its first write takes it out

    def _append(self, entry: str | None) -> bytes:
        pending = sign_pending(
            PendingRun(
                self.run_id, self.agent, self.input, self.entries, self.resumes, self.resume
            ),
            self.session_id,
            self.key,
        )
        accepted, self.accepted = self.accepted, False
        return encode(JournalEffect(JournalAppend(self.session_id, pending, entry, accepted)))

    def marker(self) -> bytes:
        """The write that records this resume (the pending run with its resume count)."""
        return self._append(None)

    def completed(self, effect: Effect, value: Any) -> bytes | None:
        """The write journaling ``effect``'s ``value`` (None: not JSON; the run fails on it)."""
        entry = self.completed_entry(effect, value)
        return None if entry is None else self._append(entry)

    def started(self, effect: CallTool) -> bytes:
        """The write recording that an ``at_most_once`` tool is about to run."""
        return self._append(self.started_entry(effect))


def resume_value(document: str) -> object:
    """The resume value a pending run keeps (JSON); a broken one is a broken log."""
    try:
        return json.loads(document)
    except (ValueError, TypeError, RecursionError):
        raise CheckpointError(
            CHECKPOINT_INVALID, "the pending run's resume value is not JSON"
        ) from None
