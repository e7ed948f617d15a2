"""Durable runs without the runtime: ``run_agent(..., journal=...)`` over any journal.

A journal is where a run's completed effects are written, one entry each, before the next
step starts (the entry format is :mod:`praxo_actors.agent._journal`'s). Run the same
``run_id`` over the same session, input and journal again after a crash, and every effect the
journal holds is answered from it instead of being performed: a completed model or tool call
is not repeated. :class:`StoreJournal` keeps the entries in a memory store.
"""

from __future__ import annotations

from typing import Any, Protocol, cast, runtime_checkable

from praxo_actors.agent._effects import CallTool, Effect, Emit
from praxo_actors.agent._interpret import (
    INTERRUPTED,
    Call,
    Reply,
    call_async,
    call_now,
    decide,
    outcome,
    publish_async,
    publish_now,
)
from praxo_actors.agent._journal import (
    decode_entry,
    encode_entry,
    entry_reply,
    place,
    started_entry,
)
from praxo_actors.agent._run import AgentRun
from praxo_actors.agent._tool import ToolError
from praxo_actors.models import Event, RunResult

__all__ = ["Journal", "ListJournal", "StoreJournal", "arun_journaled", "run_journaled"]


@runtime_checkable
class Journal(Protocol):
    """Where a durable run's entries go: ``entries()`` in order, ``append`` one durably.

    ``key`` (bytes or None) signs the entries, so a writer of the journal cannot forge them.
    """

    key: bytes | None

    def entries(self) -> list[str]: ...

    def append(self, entry: str) -> None: ...


class ListJournal:
    """A journal in a list (tests, and runs that need replay within one process)."""

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key
        self.items: list[str] = []

    def entries(self) -> list[str]:
        return list(self.items)

    def append(self, entry: str) -> None:
        self.items.append(entry)


class StoreJournal:
    """A run's journal in a memory store (namespace ``("praxo", "runs", run_id)``).

    Each :meth:`append` is one ``put``: with :class:`~praxo_actors.memory.SQLiteStore`, on
    disk before it returns. Call :meth:`clear` once the run's result is safe.
    """

    def __init__(self, store: Any, run_id: str, key: bytes | None = None) -> None:
        if not isinstance(run_id, str) or not run_id:
            raise TypeError("run_id must be a non-empty str")
        self.store = store
        self.key = key
        self.namespace = ("praxo", "runs", run_id)
        self._count: int | None = None

    def _items(self) -> list[Any]:
        items: list[Any] = []
        while True:
            page = self.store.search(self.namespace, limit=1000, offset=len(items))
            items.extend(page)
            if len(page) < 1000:
                return sorted(items, key=lambda item: item.key)

    def entries(self) -> list[str]:
        found = [item.value.get("entry", "") for item in self._items()]
        self._count = len(found)
        return [entry if isinstance(entry, str) else "" for entry in found]

    def append(self, entry: str) -> None:
        if self._count is None:
            self.entries()
        assert self._count is not None
        self.store.put(self.namespace, f"{self._count:010d}", {"entry": entry})
        self._count += 1

    def clear(self) -> None:
        """Remove every entry (the run is over)."""
        for item in self._items():
            self.store.delete(self.namespace, item.key)
        self._count = 0


class _Replay:
    """The journal's side of one run: what to answer from it, and what to write to it."""

    def __init__(self, journal: Journal, run: AgentRun, session_id: str) -> None:
        self.journal = journal
        self.recorded = journal.entries()
        self.pos = 0
        self.count = len(self.recorded)
        self.key = journal.key
        self.session_id = session_id
        self.run_id = run.run_id

    @property
    def replaying(self) -> bool:
        return self.pos < len(self.recorded)

    def _at(self, index: int) -> str:
        return place(self.session_id, self.run_id, index)

    def _next(self) -> Any:
        entry = decode_entry(self.recorded[self.pos], self._at(self.pos), self.key)
        self.pos += 1
        return entry

    def next_reply(self, effect: Effect) -> Any:
        """The reply the journal holds for ``effect`` (:data:`INTERRUPTED`: cut off mid-call)."""
        entry = self._next()
        if entry.k == "started":
            if not self.replaying:
                return INTERRUPTED
            entry = self._next()
        return entry_reply(entry, effect)

    def emitted(self, event: Event) -> Event | None:
        return None if self.replaying else event  # delivered before the crash

    def live_context(self, effect: Effect, context: Any) -> Any:
        return context

    def interrupted(self) -> ToolError:
        return ToolError("TOOL_INTERRUPTED", "the run was cut off during this call")

    def started(self, effect: Effect) -> None:
        assert isinstance(effect, CallTool)
        self.write(started_entry(effect, self._at(self.count), self.key))

    def after(self, effect: Effect, reply: Any) -> None:
        entry = encode_entry(effect, reply, self._at(self.count), self.key)
        if entry is not None:  # not JSON: the run fails on it anyway
            self.write(entry)

    def write(self, entry: str | None) -> None:
        if entry is not None:
            self.journal.append(entry)
            self.count += 1


def run_journaled(run: AgentRun, journal: Journal, session_id: str) -> RunResult:
    """Drive ``run`` to its end synchronously, journaling (or replaying) each effect."""
    replay = _Replay(journal, run, session_id)
    effect = run.effect
    while effect is not None:
        # The journal's own faults (a broken entry, a failed append) raise here, not in the run.
        step = decide(effect, replay)
        if type(step) is Reply:
            effect = run.send(_replied(replay, effect, step))
            continue
        if type(step) is Call and step.started:
            replay.started(effect)
        try:
            reply = call_now(step) if type(step) is Call else publish_now(cast(Emit, step))
        except Exception as exc:
            ok, reply = outcome(effect, False, exc)
            if not ok:
                effect = run.throw(exc)
                continue
        if type(step) is Call:
            replay.after(effect, reply)
        effect = run.send(reply)
    return run.result


async def arun_journaled(run: AgentRun, journal: Journal, session_id: str) -> RunResult:
    """Like :func:`run_journaled`, under asyncio (callbacks may be ``async def``)."""
    replay = _Replay(journal, run, session_id)
    effect = run.effect
    while effect is not None:
        step = decide(effect, replay)
        if type(step) is Reply:
            effect = run.send(_replied(replay, effect, step))
            continue
        if type(step) is Call and step.started:
            replay.started(effect)
        try:
            if type(step) is Call:
                reply = await call_async(step)
            else:
                reply = await publish_async(cast(Emit, step))
        except Exception as exc:
            ok, reply = outcome(effect, False, exc)
            if not ok:
                effect = run.throw(exc)
                continue
        if type(step) is Call:
            replay.after(effect, reply)
        effect = run.send(reply)
    return run.result


def _replied(replay: _Replay, effect: Effect, step: Reply) -> Any:
    """The reply the journal gave, journaled first when it says so (a call cut off)."""
    if step.record:
        replay.after(effect, step.value)
    return step.value
