"""Durable runs without the runtime: ``run_agent(..., journal=...)`` over any journal.

A journal is where a run's completed effects are written, one entry each, before the next
step starts (the entry format is :mod:`praxo_actors.agent._journal`'s). Run the same
``run_id`` over the same session, input and journal again after a crash, and every effect the
journal holds is answered from it instead of being performed: a completed model or tool call
is not repeated. :class:`StoreJournal` keeps the entries in a memory store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast, runtime_checkable

from praxo_actors.agent._effects import CallTool, Emit
from praxo_actors.agent._interpret import (
    Call,
    Reply,
    call_async,
    call_now,
    decide,
    outcome,
    publish_async,
    publish_now,
)
from praxo_actors.agent._replay import Replay
from praxo_actors.agent._run import AgentRun
from praxo_actors.models import Event, RunResult

Sink = Callable[[Event], Any]

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


def _open(journal: Journal, run: AgentRun, session_id: str) -> Replay:
    """The run's replay; a resume is counted in the journal before anything runs again."""
    recorded = journal.entries()
    if not recorded:
        return Replay(session_id, run.run_id, journal.key)
    replay = Replay(session_id, run.run_id, journal.key, recorded, resumes=1)
    journal.append(replay.resumed_entry())
    return replay


def _write(journal: Journal, entry: str | None) -> None:
    if entry is not None:  # None: not JSON, the run fails on it anyway
        journal.append(entry)


def _resumed(replay: Replay, sink: Sink | None) -> list[Emit]:
    """``run.resumed`` (and what a run that ended while replaying held back), to deliver."""
    events = replay.resumed_events()
    return [] if sink is None else [Emit(sink, event) for event in events]


def run_journaled(
    run: AgentRun, journal: Journal, session_id: str, sink: Sink | None = None
) -> RunResult:
    """Drive ``run`` to its end synchronously, journaling (or replaying) each effect.

    ``sink`` gets ``run.resumed`` (see :mod:`praxo_actors.agent._replay`). The journal's own
    faults (a broken entry, a failed append) and the sink's exception on ``run.resumed`` raise
    here, not in the run.
    """
    replay = _open(journal, run, session_id)
    effect = run.effect
    try:
        while effect is not None:
            step = decide(effect, replay)
            if type(step) is Reply and not step.record:
                effect = run.send(step.value)
                continue
            for told in _resumed(replay, sink):  # the run goes live here
                publish_now(told)
            if type(step) is Reply:  # an at_most_once tool cut off: its result journaled first
                _write(journal, replay.completed_entry(effect, step.value))
                effect = run.send(step.value)
                continue
            if type(step) is Call and step.started:
                journal.append(replay.started_entry(cast(CallTool, effect)))
            try:
                reply = call_now(step) if type(step) is Call else publish_now(cast(Emit, step))
            except Exception as exc:
                ok, reply = outcome(effect, False, exc)
                if not ok:
                    effect = run.throw(exc)
                    continue
            if type(step) is Call:
                _write(journal, replay.completed_entry(effect, reply))
            effect = run.send(reply)
    except Exception:
        for told in _resumed(replay, sink):  # a run that failed before going live
            publish_now(told)
        raise
    for told in _resumed(replay, sink):  # a run that completed before going live
        publish_now(told)
    return run.result


async def arun_journaled(
    run: AgentRun, journal: Journal, session_id: str, sink: Sink | None = None
) -> RunResult:
    """Like :func:`run_journaled`, under asyncio (callbacks may be ``async def``)."""
    replay = _open(journal, run, session_id)
    effect = run.effect
    try:
        while effect is not None:
            step = decide(effect, replay)
            if type(step) is Reply and not step.record:
                effect = run.send(step.value)
                continue
            for told in _resumed(replay, sink):
                await publish_async(told)
            if type(step) is Reply:
                _write(journal, replay.completed_entry(effect, step.value))
                effect = run.send(step.value)
                continue
            if type(step) is Call and step.started:
                journal.append(replay.started_entry(cast(CallTool, effect)))
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
                _write(journal, replay.completed_entry(effect, reply))
            effect = run.send(reply)
    except Exception:
        for told in _resumed(replay, sink):
            await publish_async(told)
        raise
    for told in _resumed(replay, sink):
        await publish_async(told)
    return run.result
