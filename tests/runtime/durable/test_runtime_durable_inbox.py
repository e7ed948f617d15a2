"""The durable inbox: every run a durable agent's ``submit`` accepts is in the store before
its id is returned, queued behind another run or not, and runs exactly once, in order."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, contents, error_code

from praxo_actors.agent import AgentOptions, new_agent_options
from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.memory._log import INBOX, PENDING
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.runtime import Runtime

Start = Callable[..., Runtime]


class Echo:
    """A model that answers ``done <input>``; its call for ``hold`` waits until the test ends."""

    def __init__(self, hold: str | None = None) -> None:
        self.hold = hold
        self.entered = threading.Event()
        self.calls: Counter[str] = Counter()

    async def model(self, request: Request) -> Response:
        text = str(request.messages[-1].content)
        self.calls[text] += 1
        if text == self.hold:
            self.entered.set()
            await asyncio.sleep(TIMEOUT * 3)  # cut off here
        return Response(message_assistant(f"done {text}"))

    def agent(self) -> AgentOptions:
        return new_agent_options(self.model)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """The SQLite file a test's runtimes share, one after the other."""
    return tmp_path / "s.sqlite3"


@contextmanager
def _first_runtime(path: Path, **kwargs: Any) -> Iterator[tuple[Runtime, Echo]]:
    """A runtime on ``path`` whose durable ``default`` agent holds the run ``first``; it is
    stopped when the block ends, leaving what it accepted in the store."""
    echo = Echo(hold="first")
    with Runtime.start(path, idle_timeout=None, timeout=TIMEOUT, **kwargs) as rt:
        rt.register_agent("default", echo.agent, durable=True)
        yield rt, echo


def _next_runtime(
    runtime: Start, path: Path, durable: bool = True, **kwargs: Any
) -> tuple[Runtime, Echo]:
    """The runtime after it: on ``path`` with ``resume=True``, an agent that holds nothing."""
    again = Echo()
    rt = runtime(store=path, resume=True, **kwargs)
    rt.register_agent("default", again.agent, durable=durable)
    return rt, again


def _held(runtime: Start, store: InMemoryStore) -> tuple[Runtime, Echo]:
    """A runtime on ``store`` whose durable ``default`` agent holds the run ``first``."""
    rt = runtime(store=store)
    echo = Echo(hold="first")
    rt.register_agent("default", echo.agent, durable=True)
    return rt, echo


def _accept_behind_a_held_run(rt: Runtime, echo: Echo, n: int) -> list[str]:
    """Submit ``first`` (held in its model call) and ``n`` runs queued behind it."""
    handle = rt.session("s")
    ids = [handle.submit("first")]
    assert echo.entered.wait(TIMEOUT)
    ids += [handle.submit(f"m{i}") for i in range(n)]
    return ids


def test_queued_runs_survive_a_stop_and_run_once_in_order(runtime: Start, path: Path) -> None:
    """Stopped with runs queued, each submitted run fails RUNTIME_STOPPED here and, after a
    restart with resume=True, runs once, in submission order; result(run_id) finds each."""
    with _first_runtime(path) as (rt, echo):
        ids = _accept_behind_a_held_run(rt, echo, 3)
        assert rt.inspect("s").queued_runs == 3
    with SQLiteStore(path) as store:
        (inbox,) = store.search(INBOX)
        assert [run["run_id"] for run in inbox.value["runs"]] == ids
    rt2, again = _next_runtime(runtime, path)
    handle = rt2.session("s")
    outputs = [handle.result(run_id, timeout=TIMEOUT).output for run_id in ids]
    assert outputs == ["done first", "done m0", "done m1", "done m2"]
    assert again.calls == Counter({"first": 1, "m0": 1, "m1": 1, "m2": 1})
    history = contents(handle.history(timeout=TIMEOUT))
    assert [h for h in history if not str(h).startswith("done")] == ["first", "m0", "m1", "m2"]
    assert list(rt2.store.search(INBOX)) == [] and list(rt2.store.search(PENDING)) == []


def test_their_futures_fail_runtime_stopped(path: Path) -> None:
    """A queued submitted run whose runtime stops is settled: its result there is the stop."""
    with _first_runtime(path) as (rt, echo):
        handle = rt.session("s")
        handle.submit("first")
        assert echo.entered.wait(TIMEOUT)
        queued = handle.run("plain")  # a run, not submitted: in memory only
        second = handle.submit("second")
        kernel = handle._kernel
        pending = kernel.call(kernel.known, second, timeout=TIMEOUT)
        assert pending is not None
    assert error_code(queued) == "RUNTIME_STOPPED"
    assert error_code(pending) == "RUNTIME_STOPPED"


def test_resume_pending_runs_a_session_that_has_only_queued_runs(path: Path) -> None:
    """resume_pending() counts and restores a session whose inbox holds runs (none begun)."""
    with _first_runtime(path) as (rt, echo):
        ids = _accept_behind_a_held_run(rt, echo, 2)
    again = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        again.register_agent("default", Echo().agent, durable=True)
        assert again.resume_pending() == 1
        handle = again.session("s")
        assert [handle.result(r, timeout=TIMEOUT).output for r in ids[1:]] == ["done m0", "done m1"]
    finally:
        again.stop()


def test_a_crashed_session_runs_its_accepted_runs_once(runtime: Start) -> None:
    """A session crash with submitted runs queued: restored, it runs each once, in order (the
    kernel's copies of their starts are not run again)."""
    store = InMemoryStore()
    rt, echo = _held(runtime, store)
    ids = _accept_behind_a_held_run(rt, echo, 3)
    echo.hold = None
    rt.session("s").crash_for_testing()
    handle = rt.session("s")
    outputs = [handle.result(run_id, timeout=TIMEOUT).output for run_id in ids]
    assert outputs == ["done first", "done m0", "done m1", "done m2"]
    assert echo.calls == Counter({"first": 2, "m0": 1, "m1": 1, "m2": 1})
    assert list(store.search(INBOX)) == []
    store.close()


class CountingStore(InMemoryStore):
    """An in-memory store that counts its writes (one per transaction) and inbox rows."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.inbox_rows = 0

    def _apply(self, rows: Any, deletes: Any, now_ns: int) -> None:
        self.writes += 1
        self.inbox_rows += sum(1 for ns, _, _ in rows if ns == INBOX)
        super()._apply(rows, deletes, now_ns)


def test_an_accepted_run_costs_at_most_one_store_write(runtime: Start) -> None:
    """A burst of submits queued behind a run: each is in the inbox when its id is returned,
    at a cost of at most one write (a transaction) each, fewer when the store gathers them."""
    store = CountingStore()
    rt, echo = _held(runtime, store)
    handle = rt.session("s")
    first = handle.submit("first")  # in the inbox too: it has journaled nothing yet
    assert echo.entered.wait(TIMEOUT)
    before = store.writes
    n = 50

    async def burst() -> list[str]:
        return list(await asyncio.gather(*(handle.asubmit(f"m{i}") for i in range(n))))

    ids = asyncio.run(burst())
    writes = store.writes - before
    (inbox,) = store.search(INBOX)
    accepted = [run["run_id"] for run in inbox.value["runs"]]
    assert accepted[0] == first and sorted(accepted[1:]) == sorted(ids)
    assert 1 <= writes <= n and store.inbox_rows <= n + 1
    store.close()


def test_a_submitted_run_that_fails_before_it_begins_leaves_the_inbox(runtime: Start) -> None:
    """Cancelled while queued, an accepted run is out of the inbox: it never runs later."""
    store = InMemoryStore()
    rt, echo = _held(runtime, store)
    first, queued = _accept_behind_a_held_run(rt, echo, 1)
    kernel = rt.session("s")._kernel
    assert kernel.call(kernel.cancel, queued, timeout=TIMEOUT)
    with pytest.raises(Exception) as info:
        rt.session("s").result(queued, timeout=TIMEOUT)
    assert getattr(info.value, "code", None) == "AGENT_CANCELLED"
    (inbox,) = store.search(INBOX)
    assert [run["run_id"] for run in inbox.value["runs"]] == [first]
    store.close()


def test_runs_a_stopped_session_cancelled_never_run_later(runtime: Start, path: Path) -> None:
    """handle.stop() cancels the submitted runs queued in the session: they leave the inbox,
    so a later runtime with resume=True does not run them."""
    with _first_runtime(path) as (rt, echo):
        ids = _accept_behind_a_held_run(rt, echo, 2)
        assert rt.session("s").stop(timeout=TIMEOUT)
        for run_id in ids[1:]:
            with pytest.raises(Exception) as info:
                rt.session("s").result(run_id, timeout=TIMEOUT)
            assert getattr(info.value, "code", None) == "AGENT_CANCELLED"
    rt2, again = _next_runtime(runtime, path)
    assert rt2.session("s").run("later").get(timeout=TIMEOUT).output == "done later"
    assert "m0" not in again.calls and "m1" not in again.calls


def test_a_run_submitted_behind_a_resume_is_accepted(runtime: Start) -> None:
    """Submitted while a resume's run is being found, a run is still put in the inbox."""
    from praxo_actors.agent import Tool
    from praxo_actors.middleware import require_approval
    from praxo_actors.models import ToolCall

    release = threading.Event()

    async def model(request: Request) -> Response:
        if request.step == 1 and request.messages[-1].content == "mail":
            return Response(message_assistant("", [ToolCall("send", {}, id="c1")]))
        if request.step == 2:
            await asyncio.to_thread(release.wait, TIMEOUT)
        return Response(message_assistant(f"done {request.messages[-1].content}"))

    def agent() -> AgentOptions:
        send = Tool("send", "", {}, lambda _args: "sent")
        return new_agent_options(model, tools=[send], approval=require_approval(["send"]))

    store = InMemoryStore()
    rt = runtime(store=store)
    rt.register_agent("default", agent, durable=True)
    handle = rt.session("s")
    assert handle.run("mail").get(timeout=TIMEOUT).status == "interrupted"
    resumed = handle.resume(True)
    later = handle.submit("later")  # held behind the resume, then admitted
    try:
        (inbox,) = store.search(INBOX)
        assert [run["run_id"] for run in inbox.value["runs"]] == [later]
    finally:
        release.set()
    assert resumed.get(timeout=TIMEOUT).output == 'done "sent"'
    assert handle.result(later, timeout=TIMEOUT).output == "done later"
    store.close()


def test_an_accepted_run_whose_agent_is_no_longer_durable_runs_once(
    runtime: Start, path: Path
) -> None:
    """Restored from the inbox under an agent registered without durable, the run runs and
    its commit takes it out of the inbox: a later restore does not run it again."""
    with _first_runtime(path) as (rt, echo):
        ids = _accept_behind_a_held_run(rt, echo, 1)
    rt2, again = _next_runtime(runtime, path, durable=False)  # not durable now
    handle = rt2.session("s")
    assert [handle.result(r, timeout=TIMEOUT).output for r in ids] == ["done first", "done m0"]
    assert list(rt2.store.search(INBOX)) == []
    assert handle.passivate(timeout=TIMEOUT)
    assert handle.run("later").get(timeout=TIMEOUT).output == "done later"
    assert again.calls == Counter({"first": 1, "m0": 1, "later": 1})


def test_a_forged_accepted_run_is_refused_with_a_key(runtime: Start, path: Path) -> None:
    """With a checkpoint key, an accepted run a store writer edited fails CHECKPOINT_SIGNATURE
    and leaves the inbox; the runs beside it run."""
    key = b"k" * 32
    with _first_runtime(path, checkpoint_key=key) as (rt, echo):
        first, forged, kept = _accept_behind_a_held_run(rt, echo, 2)
    with SQLiteStore(path) as store:
        (inbox,) = store.search(INBOX)
        runs = inbox.value["runs"]
        runs[1]["input"] = "rm -rf /"
        store.put(INBOX, "s", {"runs": runs})
    rt2, again = _next_runtime(runtime, path, checkpoint_key=key)
    handle = rt2.session("s")
    with pytest.raises(Exception) as info:
        handle.result(forged, timeout=TIMEOUT)
    assert getattr(info.value, "code", None) == "CHECKPOINT_SIGNATURE"
    assert handle.result(kept, timeout=TIMEOUT).output == "done m1"
    assert handle.result(first, timeout=TIMEOUT).output == "done first"
    assert "rm -rf /" not in again.calls and list(rt2.store.search(INBOX)) == []
