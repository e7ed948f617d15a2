"""The run path: the messages and loop hand-offs of a warm run, the store's group commit, and
a store actor restarted under the root supervisor."""

from __future__ import annotations

import gc
import re
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pykka
import pytest
from _runtime_helpers import TIMEOUT

from praxo_actors.actors import _checks
from praxo_actors.agent import AgentOptions, new_agent_options
from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._log import Commit
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.runtime._protocol import CommitRun, decode, encode
from praxo_actors.runtime._store._store_actor import StoreActor
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]

RUNTIME = Path(__file__).resolve().parents[3] / "praxo_actors" / "runtime"


async def _answer(request: Request) -> Response:
    return Response(message_assistant(f"{request.messages[-1].content}!"))


def _async_agent() -> AgentOptions:
    return new_agent_options(_answer)


class _Traffic:
    """Every tell and ask that reaches an actor, and every hand-off onto the runtime's loop."""

    def __init__(self) -> None:
        self.on = False
        self.messages: list[str] = []
        self.handoffs = 0


@pytest.fixture
def traffic(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Traffic]:
    """Count actor messages (by their protocol tag) while ``traffic.on`` is set."""
    seen = _Traffic()
    tell, ask = pykka.ActorRef.tell, pykka.ActorRef.ask

    def name(message: Any) -> str:
        return type(decode(message)).__name__ if isinstance(message, bytes) else repr(message)

    def counted_tell(self: pykka.ActorRef[Any], message: Any) -> None:
        if seen.on:
            seen.messages.append(name(message))
        tell(self, message)

    def counted_ask(self: pykka.ActorRef[Any], message: Any, **kwargs: Any) -> Any:
        if seen.on:
            seen.messages.append(name(message))
        return ask(self, message, **kwargs)

    monkeypatch.setattr(pykka.ActorRef, "tell", counted_tell)
    monkeypatch.setattr(pykka.ActorRef, "ask", counted_ask)
    yield seen


def _count_handoffs(rt: Runtime, seen: _Traffic, monkeypatch: pytest.MonkeyPatch) -> None:
    loop = rt._host.loop
    threadsafe = loop.call_soon_threadsafe

    def counted(callback: Any, *args: Any, **kwargs: Any) -> Any:
        if seen.on:
            seen.handoffs += 1
        return threadsafe(callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_soon_threadsafe", counted)


@pytest.mark.parametrize(("store", "handoffs"), [("memory", 1), ("sqlite", 2)])
def test_a_warm_run_is_three_actor_messages(
    runtime: Start,
    traffic: _Traffic,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    store: str,
    handoffs: int,
) -> None:
    """A warm run from a thread: StartRun, EffectDone, CommitRun; the store's reply settles it."""
    rt = runtime(
        agents={"default": _async_agent},
        store=None if store == "memory" else tmp_path / "runs.db",
    )
    handle = rt.session("s")
    assert handle.run("cold").get(timeout=TIMEOUT).output == "cold!"  # activates the session
    _count_handoffs(rt, traffic, monkeypatch)
    traffic.on = True
    assert handle.run("warm").get(timeout=TIMEOUT).output == "warm!"
    traffic.on = False
    assert traffic.messages == ["StartRun", "EffectDone", "CommitRun"]
    # The submit onto the loop; with SQLite also the store thread's reply.
    assert traffic.handoffs == handoffs


def test_a_run_from_a_coroutine_on_the_loop_crosses_no_thread(
    runtime: Start, traffic: _Traffic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the runtime's own loop a warm run is the same three messages and no hand-off."""
    rt = runtime(agents={"default": _async_agent})
    handle = rt.session("s")
    handle.run("cold").get(timeout=TIMEOUT)
    _count_handoffs(rt, traffic, monkeypatch)

    async def warm() -> str:
        traffic.on = True
        result = await handle.arun("warm")
        traffic.on = False
        return result.output

    assert rt._call(lambda: None, timeout=TIMEOUT) is None  # the loop is idle
    done: list[str] = []
    finished = threading.Event()

    def start() -> None:
        task = rt._host.loop.create_task(warm())
        task.add_done_callback(lambda t: (done.append(t.result()), finished.set()))

    rt._host.loop.call_soon_threadsafe(start)
    assert finished.wait(TIMEOUT)
    assert done == ["warm!"]
    assert traffic.messages == ["StartRun", "EffectDone", "CommitRun"]
    assert traffic.handoffs == 0


# The Python functions a warm run calls, counted on the loop's thread (profile "call" events:
# each frame entered, a coroutine's or generator's resumption included). The agent loop alone
# (``arun_agent`` on the same model) makes about 25.
WARM_RUN_CALLS = 240


def _python_calls(rt: Runtime, run: Callable[[], Any]) -> int:
    """Count the Python calls on the runtime's loop thread while the coroutine ``run()`` runs
    there (a task started from this thread; the collector off, so that none of its callbacks
    is counted)."""
    calls = [0]
    finished = threading.Event()

    def profile(_frame: Any, event: str, _arg: Any) -> None:
        if event == "call":
            calls[0] += 1

    async def counted() -> None:
        sys.setprofile(profile)
        try:
            await run()
        finally:
            sys.setprofile(None)

    def start() -> None:
        task = rt._host.loop.create_task(counted())
        task.add_done_callback(lambda _t: finished.set())

    collecting, checking = gc.isenabled(), _checks.enabled()
    gc.disable()
    _checks.enable(False)  # the suite's ownership checks wrap the kernel's methods: off here
    try:
        rt._host.loop.call_soon_threadsafe(start)
        assert finished.wait(TIMEOUT)
    finally:
        _checks.enable(checking)
        if collecting:
            gc.enable()
    return calls[0]


def test_a_warm_run_makes_few_python_calls(runtime: Start) -> None:
    """A warm run from a coroutine on the loop, in-memory store, zero-latency async model:
    at most WARM_RUN_CALLS Python calls, every part of the path included (the front, the
    kernel, the session, its callback's task, the store, the executor and asyncio)."""
    rt = runtime(agents={"default": _async_agent})
    handle = rt.session("s")
    outputs: list[str] = []

    async def warm() -> None:
        outputs.append((await handle.arun("warm")).output)

    for _ in range(3):  # the first runs make what later ones reuse
        _python_calls(rt, warm)
    counts = [_python_calls(rt, warm) for _ in range(3)]
    assert outputs == ["warm!"] * 6
    assert min(counts) <= WARM_RUN_CALLS, counts


class _Saved:
    """The ``on_saved`` of a store actor: each write's run ids; the first write waits."""

    def __init__(self) -> None:
        self.writes: list[list[str | None]] = []
        self.first = threading.Event()
        self.release = threading.Event()
        self.both = threading.Event()

    def __call__(self, runs: list[tuple[str | None, str | None]], _journaled: Any) -> None:
        self.writes.append([run_id for run_id, _ in runs])
        if len(self.writes) == 1:
            self.first.set()
            self.release.wait(TIMEOUT)  # the actor is busy: the burst gathers in its inbox
        else:
            self.both.set()


def test_a_burst_of_commits_is_one_store_write() -> None:
    """Commits that arrive while the store writes are written together, in one flush."""
    saved = _Saved()
    ref = StoreActor.start(InMemoryStore(), saved)
    try:
        ref.tell(encode(CommitRun(Commit("s0", run_id="r0"))))
        assert saved.first.wait(TIMEOUT)
        burst = [f"r{i}" for i in range(1, 21)]
        for i, run_id in enumerate(burst, 1):
            ref.tell(encode(CommitRun(Commit(f"s{i}", run_id=run_id))))
        saved.release.set()
        assert saved.both.wait(TIMEOUT)
        assert saved.writes == [["r0"], burst]
        assert ref.proxy().flushes.get(timeout=TIMEOUT) == 2
    finally:
        ref.stop(timeout=TIMEOUT)


def test_a_restarted_store_actor_is_found_again_and_no_run_is_lost(runtime: Start) -> None:
    """A store actor killed under the root supervisor restarts; the kernel takes its new ref,
    every acknowledged run is still there, and new runs commit to the new actor."""
    rt = runtime(agents={"default": _async_agent})
    done = {f"s{i}": rt.session(f"s{i}").run(f"m{i}").get(timeout=TIMEOUT) for i in range(5)}
    old = rt._store_ref
    assert old is not None
    old.tell(b"not a message")  # the store actor fails on a tell: it crashes
    eventually(lambda: (new := rt._store_ref) is not None and new is not old and new.is_alive())
    eventually(lambda: (sessions := rt._sessions_ref) is not None and sessions.is_alive())
    for session_id, result in done.items():
        handle = rt.session(session_id)
        assert handle.result(result.run_id, timeout=TIMEOUT).output == result.output
        again = handle.run("again").get(timeout=TIMEOUT)
        assert [m.content for m in again.session.messages] == [
            result.session.messages[0].content,
            result.output,
            "again",
            "again!",
        ]
    stats = rt.statistics()
    assert stats.runs_failed == 0 and stats.runs_pending == 0


def test_no_ref_in_the_runtime_is_bound_late() -> None:
    """No field of the runtime is a ``None`` set aside for someone else to fill in later."""
    late = re.compile(r"=\s*None\s*#\s*type:\s*ignore")
    found = [
        f"{path.relative_to(RUNTIME)}:{n}"
        for path in sorted(RUNTIME.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if late.search(line) and "fcntl" not in line  # an optional import, not a field
    ]
    assert found == []


def test_a_write_reports_each_run_with_its_code() -> None:
    """A flush reports every commit's run: None where it was written, SESSION_CONFLICT where
    the log had moved on; a flush of written commits alone reports no journal writes."""
    reports: list[tuple[Any, Any]] = []
    got = threading.Event()

    def on_saved(runs: Any, journaled: Any) -> None:
        reports.append((runs, journaled))
        got.set()

    ref = StoreActor.start(InMemoryStore(), on_saved)
    try:
        ref.tell(encode(CommitRun(Commit("s0", 0, "r0", record="{}"))))
        assert got.wait(TIMEOUT)
        got.clear()
        ref.tell(encode(CommitRun(Commit("s0", 0, "r1", record="{}"))))  # expects version 0
        assert got.wait(TIMEOUT)
        assert reports == [([("r0", None)], []), ([("r1", "SESSION_CONFLICT")], [])]
    finally:
        ref.stop(timeout=TIMEOUT)
