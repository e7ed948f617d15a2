"""Resumes under the runtime: concurrent resumes of one run, refused values, kept outcomes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, error_code

from praxo_actors import PraxoError
from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.memory import SQLiteStore
from praxo_actors.middleware import require_approval
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.testing import EventRecorder

Start = Callable[..., Runtime]
CALLERS = 6  # a double click, and then some
ASKED = {"approval": {"tool": "send", "arguments": {"to": "ada"}, "call_id": "c1"}}


def _model(request: Request) -> Response:
    if request.step == 1:
        return Response(message_assistant("", [ToolCall("send", {"to": "ada"}, id="c1")]))
    return Response(message_assistant(f"result: {request.messages[-1].content}"))


class Mailer:
    """An approved tool that counts its calls and, while held, blocks inside until let go."""

    def __init__(self, held: bool = False) -> None:
        self.calls = 0
        self._lock = threading.Lock()
        self.entered = threading.Event()
        self.go = threading.Event()
        if not held:
            self.go.set()

    def __call__(self, args: dict[str, Any]) -> str:
        with self._lock:
            self.calls += 1
        self.entered.set()
        if not self.go.wait(TIMEOUT):
            raise TimeoutError("the tool was never let go")
        return f"sent to {args['to']}"

    def agent(self) -> AgentOptions:
        """Return options that ask for approval before calling this tool."""
        tool = Tool("send", "", {}, self)
        return new_agent_options(_model, tools=[tool], approval=require_approval(["send"]))


@pytest.fixture
def mailer() -> Iterator[Mailer]:
    """A held mailer, let go at teardown so that no I/O thread stays blocked in it."""
    held = Mailer(held=True)
    yield held
    held.go.set()


def _store(kind: str, tmp_path: Path) -> Path | None:
    return tmp_path / "s.sqlite3" if kind == "sqlite" else None


class Outcomes:
    """What each caller got: ``"completed"`` or an error code, as they come in."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.got: list[str] = []

    def add(self, outcome: str) -> None:
        with self._changed:
            self.got.append(outcome)
            self._changed.notify_all()

    def wait_for(self, n: int) -> list[str]:
        """Wait until ``n`` callers have their answer; return the answers so far."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.got) >= n, TIMEOUT):
                pytest.fail(f"{len(self.got)} of {n} callers answered within {TIMEOUT} s")
            return list(self.got)


def _click(how: str, handle: Any, deadline: float | None, outcomes: Outcomes) -> None:
    try:
        if how == "resume":
            result = handle.resume(True, deadline=deadline).get(timeout=TIMEOUT)
        else:
            result = asyncio.run(asyncio.wait_for(handle.aresume(True, deadline), TIMEOUT))
        outcomes.add(result.status)
    except PraxoError as exc:
        outcomes.add(exc.code)
    except Exception as exc:  # a timeout or anything else: the test reports it
        outcomes.add(repr(exc))


def _ways(n: int) -> Iterable[str]:
    return ["resume" if i % 2 == 0 else "aresume" for i in range(n)]


@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize("deadline", [None, 3 * TIMEOUT])
@pytest.mark.parametrize("durable", [False, True])
def test_concurrent_resumes_from_threads_resume_the_run_once(
    runtime: Start,
    tmp_path: Path,
    mailer: Mailer,
    store: str,
    deadline: float | None,
    durable: bool,
) -> None:
    """Of resume and aresume calls racing from threads, one runs the tool; the rest are
    refused with SESSION_NOT_INTERRUPTED while that one is still in its tool."""
    rt = runtime(store=_store(store, tmp_path))
    rt.register_agent("default", mailer.agent, durable=durable)
    handle = rt.session("s")
    stopped = handle.run("mail ada").get(timeout=TIMEOUT)
    assert stopped.status == "interrupted"
    outcomes = Outcomes()
    barrier = threading.Barrier(CALLERS)

    def caller(how: str) -> None:
        barrier.wait(TIMEOUT)
        _click(how, handle, deadline, outcomes)

    threads = [threading.Thread(target=caller, args=(how,), daemon=True) for how in _ways(CALLERS)]
    for thread in threads:
        thread.start()
    try:
        assert mailer.entered.wait(TIMEOUT)
        assert outcomes.wait_for(CALLERS - 1) == ["SESSION_NOT_INTERRUPTED"] * (CALLERS - 1)
        mailer.go.set()
        got = outcomes.wait_for(CALLERS)
    finally:
        mailer.go.set()
        for thread in threads:
            thread.join(2 * TIMEOUT)
    assert got[-1] == "completed" and mailer.calls == 1
    assert rt.inspect("s").pending_interrupt is None
    assert [m.role for m in handle.history()] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize("deadline", [None, 3 * TIMEOUT])
def test_concurrent_aresumes_on_the_runtimes_loop_resume_the_run_once(
    tmp_path: Path, mailer: Mailer, store: str, deadline: float | None
) -> None:
    """Coroutines awaiting aresume together on the runtime's own loop: one resumes the run."""

    async def main() -> list[Any]:
        async with Runtime.open(_store(store, tmp_path), idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", mailer.agent)
            handle = rt.session("s")
            assert (await handle.arun("mail ada")).status == "interrupted"
            clicks = [handle.aresume(True, deadline=deadline) for _ in range(CALLERS)]
            tasks = [asyncio.ensure_future(click) for click in clicks]
            assert await asyncio.to_thread(mailer.entered.wait, TIMEOUT)
            pending = set(tasks)
            async with asyncio.timeout(TIMEOUT):
                while len(pending) > 1:
                    _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            refused = [t.exception() for t in tasks if t not in pending]
            mailer.go.set()
            async with asyncio.timeout(TIMEOUT):
                winner = await pending.pop()
            history = await handle.ahistory()
            return [refused, winner, [m.role for m in history]]

    refused, winner, roles = asyncio.run(main())
    assert [getattr(e, "code", e) for e in refused] == ["SESSION_NOT_INTERRUPTED"] * (CALLERS - 1)
    assert winner.status == "completed" and winner.output == 'result: "sent to ada"'
    assert mailer.calls == 1 and roles == ["user", "assistant", "tool", "assistant"]


def test_a_resume_after_the_run_went_on_is_refused(runtime: Start) -> None:
    """A resume once the run has completed fails with SESSION_NOT_INTERRUPTED; the run's kept
    outcome is its completion, not the interruption before it nor the refusal."""
    mail = Mailer()
    rt = runtime(agents={"default": mail.agent})
    handle = rt.session("s")
    stopped = handle.run("mail ada").get(timeout=TIMEOUT)
    done = handle.resume(True).get(timeout=TIMEOUT)
    assert error_code(handle.resume(True)) == "SESSION_NOT_INTERRUPTED"
    assert error_code(handle.resume("yes please")) == "SESSION_NOT_INTERRUPTED"
    kept = handle.result(stopped.run_id)
    assert kept.status == "completed" and kept.output == done.output
    assert mail.calls == 1


REFUSED = ["yes please", 3, None, {"approved": "maybe"}, {"approved": True, "arguments": [1]}]


@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize("durable", [False, True])
def test_a_valid_resume_after_refused_ones_works(
    runtime: Start, tmp_path: Path, store: str, durable: bool
) -> None:
    """Refused resume values leave the interrupt pending and the log as it was; a valid resume
    after any number of them completes the run, session after session."""
    mail = Mailer()
    rt = runtime(store=_store(store, tmp_path))
    rt.register_agent("default", mail.agent, durable=durable)
    for i in range(6):
        sid = f"s{i}"
        handle = rt.session(sid)
        stopped = handle.run("mail ada").get(timeout=TIMEOUT)
        for value in REFUSED[: i + 1]:
            assert error_code(handle.resume(value)) == "AGENT_INVALID_RESUME"
        for value in ({1, 2}, "\ud800", float("nan")):
            with pytest.raises(PraxoError) as refused:
                handle.resume(value)
            assert refused.value.code == "RUNTIME_INVALID_INPUT"
        assert rt.inspect(sid).pending_interrupt == ASKED
        assert [m.role for m in handle.history()] == ["user", "assistant"]
        kept = handle.result(stopped.run_id)
        assert kept.status == "interrupted" and kept.interrupt == ASKED
        done = handle.resume(True).get(timeout=TIMEOUT)
        assert done.status == "completed" and done.run_id == stopped.run_id
        assert mail.calls == i + 1
        assert [m.role for m in handle.history()] == ["user", "assistant", "tool", "assistant"]
        assert handle.result(stopped.run_id).output == done.output == 'result: "sent to ada"'


class HeldStore(SQLiteStore):
    """A SQLite store whose writes wait, while it is closed, until it is opened."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.open = threading.Event()
        self.open.set()
        self.failing = False

    def apply(self, puts: Any, deletes: Any = ()) -> None:
        if not self.open.wait(TIMEOUT):
            raise TimeoutError("the store was never opened")
        if self.failing:
            raise OSError("disk I/O error")
        super().apply(puts, deletes)


def test_a_refused_resume_is_not_settled_by_a_later_store_write(
    runtime: Start, tmp_path: Path, mailer: Mailer
) -> None:
    """The valid resume that follows a refused one is settled by its own commit only: a store
    write finishing late, while the valid one runs, does not fail it with STORE_FAILED."""
    store = HeldStore(tmp_path / "held.sqlite3")
    try:
        rt = runtime(agents={"default": mailer.agent}, store=store)
        handle = rt.session("s")
        stopped = handle.run("mail ada").get(timeout=TIMEOUT)
        store.open.clear()
        assert error_code(handle.resume("yes please")) == "AGENT_INVALID_RESUME"
        resumed = handle.resume(True)
        assert mailer.entered.wait(TIMEOUT)
        store.open.set()  # whatever the refusal wrote lands now, while the resumed run is held
        assert rt.inspect("elsewhere").state == "unknown"  # a store read: after that write
        rt.statistics()  # a turn of the router: after it settled what that write held
        assert not resumed.done()
        assert rt.inspect("s").running_run_id == stopped.run_id
        mailer.go.set()
        done = resumed.get(timeout=TIMEOUT)
        assert done.status == "completed" and mailer.calls == 1
        rt.stop()
    finally:
        store.open.set()
        store.close()


def test_a_resume_before_the_interruption_is_stored_waits_for_it(
    runtime: Start, tmp_path: Path
) -> None:
    """A resume sent as soon as run.interrupted is seen, before the store has the interrupted
    run, waits for it: the first future gets the interruption, the resume's the rest."""
    store = HeldStore(tmp_path / "held.sqlite3")
    mail = Mailer()
    try:
        rt = runtime(agents={"default": mail.agent}, store=store)
        recorder = EventRecorder()
        rt.events.subscribe(recorder, pattern="run.interrupted")
        handle = rt.session("s")
        store.open.clear()
        first = handle.run("mail ada")
        recorder.wait_for("run.interrupted", TIMEOUT)
        resumed = handle.resume(True)
        rt.statistics()  # a turn of the router: the resume has been admitted, or held
        assert not first.done() and not resumed.done()
        store.open.set()
        stopped = first.get(timeout=TIMEOUT)
        assert stopped.status == "interrupted" and stopped.interrupt == ASKED
        done = resumed.get(timeout=TIMEOUT)
        assert done.status == "completed" and done.run_id == stopped.run_id
        assert mail.calls == 1
        rt.stop()
    finally:
        store.open.set()
        store.close()


def test_a_resume_held_for_an_interruption_the_store_refused_is_refused(
    runtime: Start, tmp_path: Path
) -> None:
    """An interruption whose write fails leaves nothing to resume: the resume held for it
    fails with SESSION_NOT_INTERRUPTED and the tool is not called."""
    store = HeldStore(tmp_path / "held.sqlite3")
    mail = Mailer()
    try:
        rt = runtime(agents={"default": mail.agent}, store=store)
        recorder = EventRecorder()
        rt.events.subscribe(recorder, pattern="run.interrupted")
        store.open.clear()
        store.failing = True
        first = rt.session("s").run("mail ada")
        recorder.wait_for("run.interrupted", TIMEOUT)
        resumed = rt.session("s").resume(True)
        rt.statistics()
        store.open.set()
        assert error_code(first) == "STORE_FAILED"
        assert error_code(resumed) == "SESSION_NOT_INTERRUPTED"
        store.failing = False
        assert rt.inspect("s").pending_interrupt is None
        assert error_code(rt.session("s").resume(True)) == "SESSION_NOT_INTERRUPTED"
        assert mail.calls == 0
        rt.stop()
    finally:
        store.open.set()
        store.close()


def test_a_held_resume_settles_when_the_runtime_stops(runtime: Start, tmp_path: Path) -> None:
    """A resume held for an interruption not yet stored settles while the runtime stops."""
    store = HeldStore(tmp_path / "held.sqlite3")
    try:
        rt = runtime(agents={"default": Mailer().agent}, store=store)
        recorder = EventRecorder()
        rt.events.subscribe(recorder, pattern="run.interrupted")
        store.open.clear()
        first = rt.session("s").run("mail ada")
        recorder.wait_for("run.interrupted", TIMEOUT)
        resumed = rt.session("s").resume(True)
        rt.statistics()
        stopping = threading.Thread(target=rt.stop)
        stopping.start()
        store.open.set()
        assert first.get(timeout=TIMEOUT).status == "interrupted"
        try:
            outcome = resumed.get(timeout=TIMEOUT).status
        except PraxoError as exc:
            outcome = exc.code
        assert outcome in ("completed", "RUNTIME_STOPPED")
        stopping.join(TIMEOUT)
        assert not stopping.is_alive()
    finally:
        store.open.set()
        store.close()
