"""One durable run's journal state inside its session actor: appends, replay, renumbered events.

A durable run journals each completed effect before the machine takes its next step (the
session holds the outcome until the store acknowledges it with ``Journaled``). A resumed run is
the same run started again from the same session and input: the machine is deterministic, so
it asks for the same effects in the same order, and each one the journal holds is answered
from it instead of being performed. Events emitted while replaying were delivered before the
crash and are not repeated; ``run.resumed`` marks where live execution picks up, and every
later event's ``seq`` moves one up to make room for it.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import msgspec

from praxo_actors._errors import CheckpointError
from praxo_actors.agent._context import ToolContext
from praxo_actors.agent._effects import CallTool, Effect
from praxo_actors.agent._interpret import INTERRUPTED, LIVE
from praxo_actors.agent._journal import (
    decode_entry,
    effect_name,
    encode_entry,
    entry_reply,
    place,
)
from praxo_actors.agent._journal import started_entry as _started
from praxo_actors.agent._tool import ToolError
from praxo_actors.memory._log import JournalAppend, PendingRun, sign_pending
from praxo_actors.models import Event
from praxo_actors.runtime._protocol import JournalEffect, encode

if TYPE_CHECKING:
    pass

__all__ = ["MAX_RESUMES", "DurableRun", "resume_value"]

MAX_RESUMES = 3
"""A run resumed this many times and cut off again fails ``SESSION_CRASHED`` (a crash loop)."""


class DurableRun:
    """The journal of the run in flight of a durable agent (owned by its session actor)."""

    __slots__ = (
        "accepted",
        "agent",
        "entries",
        "first_live",
        "input",
        "key",
        "pos",
        "replay",
        "resume",
        "resumes",
        "run_id",
        "session_id",
        "shift",
        "skipped",
    )

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
        self.resume = resume
        self.session_id = session_id
        self.run_id = run_id
        self.agent = agent
        self.input = input
        self.key = key
        self.replay = journal  # None: not resuming, or replayed to the end
        self.pos = 0
        self.entries = len(journal or ())
        self.resumes = resumes
        self.skipped = 0  # events the replay dropped
        self.shift = 0  # 1 once run.resumed took a seq
        self.first_live = resumes > 0
        self.accepted = False  # from the session's inbox: its first write takes it out

    @property
    def replaying(self) -> bool:
        return self.replay is not None

    def _where(self, index: int) -> str:
        return place(self.session_id, self.run_id, index)

    def _append(self, entry: str | None) -> bytes:
        if entry is not None:
            self.entries += 1
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
        entry = encode_entry(effect, value, self._where(self.entries), self.key)
        return None if entry is None else self._append(entry)

    def started(self, effect: CallTool) -> bytes:
        """The write recording that an ``at_most_once`` tool is about to run."""
        return self._append(_started(effect, self._where(self.entries), self.key))

    def next_reply(self, effect: Effect) -> Any:
        """Answer ``effect`` from the journal: its reply, ``LIVE`` or ``INTERRUPTED``.

        Raises:
            CheckpointError: An entry that is forged, broken, or for another effect.
        """
        replay = self.replay
        assert replay is not None
        if self.pos >= len(replay):
            self.replay = None
            return LIVE
        entry = decode_entry(replay[self.pos], self._where(self.pos), self.key)
        self.pos += 1
        if entry.k == "started":
            if entry.n != effect_name(effect):
                raise CheckpointError("CHECKPOINT_INVALID", "the journal is for another tool")
            if self.pos >= len(replay):
                self.replay = None
                return INTERRUPTED
            entry = decode_entry(replay[self.pos], self._where(self.pos), self.key)
            self.pos += 1
        return entry_reply(entry, effect)

    def emitted(self, event: Event) -> Event | None:
        """The event to publish for one the machine emitted (None while replaying)."""
        if self.replay is not None:
            self.skipped += 1
            return None
        if self.shift:
            return msgspec.structs.replace(event, seq=event.seq + 1)
        return event

    def resumed_event(self) -> Event | None:
        """``run.resumed``, once, where live execution picks up (None if not resumed)."""
        if self.resumes == 0 or self.shift:
            return None
        self.shift = 1
        data = {"replayed": self.pos, "resumes": self.resumes}
        return Event(
            "run.resumed", self.run_id, self.session_id, self.skipped, time.time_ns(), data
        )

    def live_context(self, effect: Effect, context: Any) -> Any:
        """The first call made live after a resume may be a repeat: a tool's ``attempt`` says so."""
        if not self.first_live or (context is None and isinstance(effect, CallTool)):
            return context
        self.first_live = False
        if not isinstance(context, ToolContext):  # a model's: it has no attempt to show
            return context
        return msgspec.structs.replace(context, attempt=self.resumes + 1)

    def interrupted(self) -> ToolError:
        """The result of an ``at_most_once`` call in flight at the crash."""
        return ToolError("TOOL_INTERRUPTED", "the run was cut off while this call was in flight")


def resume_value(document: str) -> object:
    """The resume value a pending run keeps (JSON); a broken one is a broken log."""
    try:
        return json.loads(document)
    except (ValueError, TypeError, RecursionError):
        raise CheckpointError(
            "CHECKPOINT_INVALID", "the pending run's resume value is not JSON"
        ) from None
