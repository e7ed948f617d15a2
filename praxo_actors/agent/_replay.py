"""The replay rules of a durable run, the same for every driver.

A durable run journals each completed effect before it takes its next step. A resumed run is
the same run started again from the same session and input: the machine is deterministic, so it
asks for the same effects in the same order, and :class:`Replay` answers each one the journal
holds from it instead of performing it. :func:`~praxo_actors.agent.run_agent`,
:func:`~praxo_actors.agent.arun_agent` (with a journal) and the runtime's session actor all
replay through it, so they follow one set of rules:

- **Where replay ends.** At the first effect the journal does not hold: the run goes *live*.
- **A tool in flight at the crash.** The journal's last entry is the ``started`` marker of an
  ``at_most_once`` tool: that tool is not called again; its result is
  ``ToolError("TOOL_INTERRUPTED")``, journaled before the run is sent it. An
  ``at_least_once`` tool leaves no marker and is simply called again.
- **Events.** Events emitted while replaying were delivered before the crash and are dropped.
  Where the run goes live, ``run.resumed`` (``data``: ``replayed`` entries, ``resumes``) takes
  the next ``seq`` and every later event's ``seq`` moves one up. A run that ends before going
  live (its journal held its last effect) delivers the events emitted after the journal's last
  entry, after its ``run.resumed``: its end may never have been told.
- **Attempts.** The first call made live after a resume may be a repeat (unless the call in
  flight was an ``at_most_once`` tool, answered ``TOOL_INTERRUPTED``): a tool's
  ``ToolContext.attempt`` is then the number of resumes plus one (its ``idempotency_key`` is
  the same on every attempt).

How resumes are counted is the driver's: the session keeps the count in its pending run; a
plain journal holds the ``resumed`` marker each resume writes before anything runs again.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from praxo_actors._errors import CheckpointError
from praxo_actors.agent._context import ToolContext
from praxo_actors.agent._effects import CallTool, Effect
from praxo_actors.agent._interpret import INTERRUPTED, LIVE
from praxo_actors.agent._journal import (
    Entry,
    decode_entry,
    effect_name,
    encode_entry,
    entry_reply,
    place,
    resumed_entry,
    started_entry,
)
from praxo_actors.agent._tool import ToolError
from praxo_actors.codes import CHECKPOINT_INVALID, TOOL_INTERRUPTED
from praxo_actors.models import Event

__all__ = ["Replay"]


class Replay:
    """The journal of one durable run as it is replayed and written (owned by its driver).

    Args:
        session_id: The run's session (entries are signed to their place in it).
        run_id: The run's id.
        key: Signs and verifies the entries (None: unsigned).
        journal: The entries a resumed run replays (None: a run that is not resumed).
        resumes: How many times the run was resumed, this time included; a plain journal's
            ``resumed`` markers add to it as they are replayed.
    """

    __slots__ = (
        "_ahead",
        "_base",
        "_first_live",
        "_markers",
        "_next_seq",
        "_replay",
        "_replayed",
        "_shift",
        "_skipped",
        "_tail",
        "entries",
        "key",
        "pos",
        "run_id",
        "session_id",
    )

    def __init__(
        self,
        session_id: str,
        run_id: str,
        key: bytes | None,
        journal: list[str] | None = None,
        resumes: int = 0,
    ) -> None:
        self.session_id = session_id
        self.run_id = run_id
        self.key = key
        self._replay = journal  # None: live (not resuming, or replayed to the end)
        self.pos = 0  # entries of the journal read so far
        self.entries = len(journal or ())  # entries the journal holds, the ones written included
        self._ahead: Entry | None = None  # the next entry, read ahead
        self._base = resumes
        self._markers = 0
        self._replayed = 0  # entries that answered an effect
        self._skipped = 0  # events dropped as delivered before the crash
        self._next_seq: int | None = None  # the seq after the last one dropped
        self._tail: list[Event] | None = None  # emitted after the journal's last entry
        self._shift = 0  # 1 once run.resumed took a seq
        self._first_live = resumes > 0

    @property
    def replaying(self) -> bool:
        """Whether effects are still answered from the journal."""
        return self._replay is not None

    @property
    def resumes(self) -> int:
        """How many times the run was resumed, this time included."""
        return self._base + self._markers

    def _where(self, index: int) -> str:
        return place(self.session_id, self.run_id, index)

    def _peek(self) -> Entry | None:
        """Return the next entry that answers an effect (None: none left); skip markers."""
        replay = self._replay
        assert replay is not None
        while self._ahead is None and self.pos < len(replay):
            entry = decode_entry(replay[self.pos], self._where(self.pos), self.key)
            self.pos += 1
            if entry.k == "resumed":
                self._markers += 1
            else:
                self._ahead = entry
        return self._ahead

    def _take(self) -> Entry | None:
        entry = self._peek()
        if entry is not None:
            self._ahead = None
            self._replayed += 1
        return entry

    def _go_live(self) -> None:
        self._replay = None
        tail, self._tail = self._tail, None
        if tail:  # told before the call the crash cut off was made
            self._skipped += len(tail)
            self._next_seq = tail[-1].seq + 1

    def next_reply(self, effect: Effect) -> Any:
        """Answer ``effect`` from the journal: its reply, :data:`LIVE` or :data:`INTERRUPTED`.

        Raises:
            CheckpointError: An entry that is forged, broken, or for another effect.
        """
        entry = self._take()
        if entry is None:
            self._go_live()
            return LIVE
        if entry.k == "started":
            if entry.n != effect_name(effect):
                raise CheckpointError(CHECKPOINT_INVALID, "the journal is for another tool")
            entry = self._take()
            if entry is None:
                self._go_live()
                self._first_live = False  # the call in flight was this one: not made again
                return INTERRUPTED
        return entry_reply(entry, effect)

    def emitted(self, event: Event) -> Event | None:
        """Return the event to deliver for one the run emitted (None: delivered before).

        Raises:
            CheckpointError: An entry read ahead that is forged or broken.
        """
        if self._replay is None:
            return msgspec.structs.replace(event, seq=event.seq + 1) if self._shift else event
        if self._peek() is None:  # after the last entry: held until the run goes live or ends
            if self._tail is None:
                self._tail = []
            self._tail.append(event)
        else:
            self._skipped += 1
            self._next_seq = event.seq + 1
        return None

    def resumed_events(self) -> list[Event]:
        """Return ``run.resumed`` once, where the run goes live or ends, with the events held
        after the journal's last entry by a run that ended before going live."""
        if self._base == 0 or self._shift:
            return []
        self._shift = 1
        seq = self._skipped if self._next_seq is None else self._next_seq
        data = {"replayed": self._replayed, "resumes": self.resumes}
        resumed = Event("run.resumed", self.run_id, self.session_id, seq, time.time_ns(), data)
        tail, self._tail = self._tail or [], None
        return [resumed, *(msgspec.structs.replace(e, seq=e.seq + 1) for e in tail)]

    def live_context(self, effect: Effect, context: Any) -> Any:
        """The first call made live after a resume may be a repeat: a tool's ``attempt`` says so."""
        if not self._first_live or (context is None and isinstance(effect, CallTool)):
            return context
        self._first_live = False
        if not isinstance(context, ToolContext):  # a model's: it has no attempt to show
            return context
        return msgspec.structs.replace(context, attempt=self.resumes + 1)

    def interrupted(self) -> ToolError:
        """The result of an ``at_most_once`` call in flight at the crash."""
        return ToolError(TOOL_INTERRUPTED, "the run was cut off while this call was in flight")

    def completed_entry(self, effect: Effect, value: Any) -> str | None:
        """Return the next entry, journaling ``effect``'s ``value`` (None: not JSON; the run
        fails on it anyway)."""
        entry = encode_entry(effect, value, self._where(self.entries), self.key)
        if entry is not None:
            self.entries += 1
        return entry

    def started_entry(self, effect: CallTool) -> str:
        """Return the next entry: an ``at_most_once`` tool is about to run."""
        self.entries += 1
        return started_entry(effect, self._where(self.entries - 1), self.key)

    def resumed_entry(self) -> str:
        """Return the next entry: a plain journal's marker of this resume."""
        self.entries += 1
        return resumed_entry(self._where(self.entries - 1), self.key)
