"""The kernel's session table: pending runs per entry and least-recently-used order."""

from __future__ import annotations

import gc
from typing import Any

from praxo_actors.runtime._kernel._statistics import Counters
from praxo_actors.runtime._kernel._table import Entry, SessionTable


class _Ref:
    """A stand-in actor ref that records its stop."""

    def __init__(self) -> None:
        self.stopped = False

    def stop(self, block: bool = True) -> None:
        self.stopped = True


class _Registry:
    """A stand-in registry that records what is unregistered."""

    def __init__(self) -> None:
        self.dropped: list[str] = []

    def unregister(self, name: str) -> None:
        self.dropped.append(name)


def _table(now: list[float]) -> SessionTable:
    return SessionTable(_Registry(), Counters(), lambda: now[0])


def _live(table: SessionTable, session_id: str) -> tuple[Entry, Any]:
    entry = table.add(session_id)
    entry.ref, entry.backlog = _Ref(), None  # type: ignore[assignment]
    return entry, entry.ref


def test_runs_are_added_and_popped_in_any_order() -> None:
    """An entry holds each pending run until popped, and none once the last is popped."""
    entry = Entry()
    assert not entry.runs and entry.pop_run("r0") is False
    for i in range(3):
        entry.add_run(f"r{i}")
    assert list(entry.runs) == ["r0", "r1", "r2"] and len(entry.runs) == 3
    assert entry.pop_run("r1") is True
    assert entry.pop_run("r1") is False
    assert list(entry.runs) == ["r0", "r2"]
    assert entry.pop_run("r2") is True and entry.pop_run("r0") is True
    assert not entry.runs and "r0" not in entry.runs
    entry.add_run("r3")
    assert dict(entry.runs) == {"r3": None}


def test_an_entry_with_a_run_pending_adds_no_tracked_object() -> None:
    """The ids of an entry's pending runs are held in a dict the collector does not track."""
    entry = Entry()
    entry.add_run("r0")
    assert not gc.is_tracked(entry.runs)
    entry.add_run("r1")
    assert not gc.is_tracked(entry.runs)


def test_idle_entries_share_no_runs_with_each_other() -> None:
    """Adding a run to one idle entry leaves every other idle entry empty."""
    a, b = Entry(), Entry()
    a.add_run("r")
    assert "r" in a.runs and not b.runs
    assert a.pop_run("r") and not a.runs and not b.runs


def test_evict_takes_the_least_recently_used_idle_session() -> None:
    """A touched session moves to the end; eviction skips busy sessions."""
    now = [0.0]
    table = _table(now)
    entries = {sid: _live(table, sid) for sid in ("a", "b", "c")}
    table.touch("a", entries["a"][0])
    entries["b"][0].add_run("r")
    assert [sid for sid, *_ in table.describe(None, 10)] == ["b", "c", "a"]
    assert table.evict() and entries["c"][1].stopped and "c" not in table
    assert table.evict() and entries["a"][1].stopped and "a" not in table
    assert not table.evict() and "b" in table and len(table) == 1
    assert table.registry.dropped == ["c", "a"]


def test_lru_order_holds_over_many_touches() -> None:
    """After many re-insertions the order is still least recently used first."""
    now = [0.0]
    table = _table(now)
    ids = [f"s{i}" for i in range(50)]
    entries = {sid: _live(table, sid)[0] for sid in ids}
    for round_ in range(20):
        for sid in ids[round_ % 7 :: 3]:
            table.touch(sid, entries[sid])
            ids.remove(sid)
            ids.append(sid)
    assert [sid for sid, *_ in table.describe(None, 100)] == ids
    now[0] = 5.0
    table.touch(ids[-1], entries[ids[-1]])
    assert table.passivate_idle(1.0) == 49 and list(table.live) == [ids[-1]]


def test_waiters_are_called_once_when_their_session_is_live() -> None:
    """``when_ready`` waits for an activating entry; ``wake`` calls each waiter once, in order."""
    table = _table([0.0])
    entry = table.add("s")
    calls: list[tuple[str, Any]] = []
    table.when_ready("s", lambda ref: calls.append(("a", ref)))
    table.when_ready("s", lambda ref: calls.append(("b", ref)))
    table.when_ready("t", lambda ref: calls.append(("not live", ref)))
    assert calls == [("not live", None)]
    ref = _Ref()
    entry.ref, entry.backlog = ref, None  # type: ignore[assignment]
    table.wake(entry, ref)  # type: ignore[arg-type]
    table.wake(entry, ref)  # type: ignore[arg-type]
    assert calls == [("not live", None), ("a", ref), ("b", ref)]
    table.when_ready("s", lambda r: calls.append(("live", r)))
    assert calls[-1] == ("live", ref) and table.waiters == {}


def test_an_abandoned_or_dropped_entry_leaves_no_waiter_behind() -> None:
    """Waiters of an abandoned or a dropped entry get None (the session is not live), once."""
    table = _table([0.0])
    calls: list[Any] = []
    abandoned = table.add("a")
    table.when_ready("a", calls.append)
    table.wake(abandoned, None)
    dropped = table.add("d")
    table.when_ready("d", calls.append)
    assert table.drop("d", dropped) and "d" not in table
    assert calls == [None, None] and table.waiters == {}
    table.wake(dropped, None)  # the activation that failed wakes it again: nobody is left
    assert calls == [None, None]
    again = table.add("d")
    table.when_ready("d", calls.append)
    assert list(table.waiters) == [again]  # a new entry for the same id has its own waiters


def test_a_finished_activation_batch_holds_no_session(monkeypatch: Any) -> None:
    """Once its sessions are live, an activation batch keeps neither them nor their documents."""
    from praxo_actors.agent import new_agent_options
    from praxo_actors.models import Request, Response, message_assistant
    from praxo_actors.runtime import Runtime
    from praxo_actors.runtime._kernel import _activation

    batches: list[Any] = []

    class Recorded(_activation._Batch):
        __slots__ = ()

        def __init__(self, ids: list[str], entries: list[Any]) -> None:
            super().__init__(ids, entries)
            batches.append(self)

    monkeypatch.setattr(_activation, "_Batch", Recorded)

    async def zero(_request: Request) -> Response:
        return Response(message_assistant("ok"))

    with Runtime.start(idle_timeout=None) as rt:
        rt.register_agent("zero", lambda: new_agent_options(zero))
        futures = [rt.session(f"s{i}", agent="zero").run("x") for i in range(5)]
        assert [f.get(timeout=10).output for f in futures] == ["ok"] * 5
        assert all(rt.session(f"s{i}", agent="zero").live for i in range(5))
        assert batches and sum(1 for b in batches if b.done) == len(batches)
        assert [(b.ids, b.entries, b.documents, b.refs) for b in batches] == [
            ([], [], None, None)
        ] * len(batches)
