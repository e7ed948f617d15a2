"""Durable runs without the runtime: ``run_agent(..., journal=...)`` over any journal.

A journal is where a run's completed effects are written, one entry each, before the next
step starts (the entry format is :mod:`praxo_actors.agent._journal`'s). Run the same
``run_id`` over the same session, input and journal again after a crash, and every effect the
journal holds is answered from it instead of being performed: a completed model or tool call
is not repeated. :class:`StoreJournal` keeps the entries in a memory store.
"""

from __future__ import annotations

import inspect
import types
from typing import Any, Protocol, runtime_checkable

from praxo_actors.agent._drivers import _ainvoke, _invoke
from praxo_actors.agent._effects import CallModel, CallRepairer, CallSummarizer, CallTool, Emit
from praxo_actors.agent._journal import (
    decode_entry,
    encode_entry,
    entry_reply,
    place,
    started_entry,
)
from praxo_actors.agent._run import AgentRun
from praxo_actors.agent._tool import TOOL_RETRY, ToolError, ToolRetry
from praxo_actors.models import RunResult

__all__ = ["Journal", "ListJournal", "StoreJournal", "arun_journaled", "run_journaled"]

_CALLS = (CallModel, CallTool, CallRepairer, CallSummarizer)


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

    def answer(self, effect: Any) -> Any:
        """The reply the journal holds for ``effect`` (an interrupted call gets its error)."""
        entry = self._next()
        if entry.k == "started":
            if not self.replaying:
                reply = ToolError("TOOL_INTERRUPTED", "the run was cut off during this call")
                self.write(encode_entry(effect, reply, self._at(self.count), self.key))
                return reply
            entry = self._next()
        return entry_reply(entry, effect)

    def before(self, effect: Any) -> None:
        if isinstance(effect, CallTool) and effect.tool.delivery == "at_most_once":
            self.write(started_entry(effect, self._at(self.count), self.key))

    def after(self, effect: Any, reply: Any) -> None:
        entry = encode_entry(effect, reply, self._at(self.count), self.key)
        if entry is not None:  # not JSON: the run fails on it anyway
            self.write(entry)

    def write(self, entry: str | None) -> None:
        if entry is not None:
            self.journal.append(entry)
            self.count += 1


def _retried(exc: ToolRetry) -> ToolError:
    # The result a raised ToolRetry stands for, journaled like any result so that a replay
    # answers the call alike (an exception would leave no entry, and the replay would drift).
    return ToolError(TOOL_RETRY, exc.message)


def run_journaled(run: AgentRun, journal: Journal, session_id: str) -> RunResult:
    """Drive ``run`` to its end synchronously, journaling (or replaying) each effect."""
    replay = _Replay(journal, run, session_id)
    effect = run.effect
    while effect is not None:
        if isinstance(effect, _CALLS):
            if replay.replaying:
                effect = run.send(replay.answer(effect))
                continue
            replay.before(effect)
            try:
                reply = _invoke(effect)
                if type(reply) is types.CoroutineType:
                    reply.close()
                    raise TypeError(f"an async callback needs arun_agent: {effect!r}")
            except Exception as exc:
                if not (isinstance(exc, ToolRetry) and isinstance(effect, CallTool)):
                    effect = run.throw(exc)
                    continue
                reply = _retried(exc)
            replay.after(effect, reply)
            effect = run.send(reply)
        elif isinstance(effect, Emit) and replay.replaying:
            effect = run.send(None)  # delivered before the crash
        else:
            try:
                reply = _invoke(effect)
            except Exception as exc:
                effect = run.throw(exc)
                continue
            effect = run.send(reply)
    return run.result


async def arun_journaled(run: AgentRun, journal: Journal, session_id: str) -> RunResult:
    """Like :func:`run_journaled`, under asyncio (callbacks may be ``async def``)."""
    replay = _Replay(journal, run, session_id)
    effect = run.effect
    while effect is not None:
        if isinstance(effect, _CALLS):
            if replay.replaying:
                effect = run.send(replay.answer(effect))
                continue
            replay.before(effect)
            try:
                if isinstance(effect, CallModel | CallTool):
                    reply = await _ainvoke(effect)
                else:
                    reply = _invoke(effect)
                    if inspect.isawaitable(reply):
                        reply = await reply
            except Exception as exc:
                if not (isinstance(exc, ToolRetry) and isinstance(effect, CallTool)):
                    effect = run.throw(exc)
                    continue
                reply = _retried(exc)
            replay.after(effect, reply)
            effect = run.send(reply)
        elif isinstance(effect, Emit) and replay.replaying:
            effect = run.send(None)
        else:
            try:
                reply = _invoke(effect)
                if inspect.isawaitable(reply):
                    reply = await reply
            except Exception as exc:
                effect = run.throw(exc)
                continue
            effect = run.send(reply)
    return run.result
