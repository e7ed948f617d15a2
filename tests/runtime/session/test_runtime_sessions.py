"""Sessions: serialised and atomic runs, checkpoints, crash restore, and where callbacks run."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, Gate, contents, echo_agent, error_code

from praxo_actors import PraxoError
from praxo_actors.agent import AgentError, AgentOptions, Tool, new_agent_options
from praxo_actors.core import DEFAULT_CHECKPOINT_TYPES, dump_checkpoint
from praxo_actors.memory import InMemoryStore
from praxo_actors.models import (
    ImageBlock,
    Message,
    ModelError,
    Request,
    Response,
    Session,
    TextBlock,
    ToolCall,
    message_assistant,
    message_user,
)
from praxo_actors.runtime import RunFuture, Runtime, read_session
from praxo_actors.testing import FunctionModel, ScriptedModel
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]
CHECKPOINTS = ("praxo", "sessions")


def _last_user(request: Request) -> str:
    return str([m for m in request.messages if m.role == "user"][-1].content)


def test_run_completes_and_commits_its_messages(runtime: Start) -> None:
    """A run returns its result and its session keeps the user and assistant messages."""
    rt = runtime(agents={"default": echo_agent})
    handle = rt.session("s1")
    result = handle.run("hello").get(timeout=TIMEOUT)
    assert result.output == "hello"
    assert result.session.id == "s1"
    assert contents(handle.history()) == ["hello", "hello"]
    assert [m.role for m in handle.history()] == ["user", "assistant"]


def test_runs_on_one_session_never_overlap(runtime: Start) -> None:
    """Runs sent to one session from many threads run one at a time, each on the last's history."""
    lock = threading.Lock()
    state = {"inside": 0, "most": 0}
    seen: list[int] = []

    def model(request: Request) -> Response:
        with lock:
            state["inside"] += 1
            state["most"] = max(state["most"], state["inside"])
            seen.append(len(request.messages))
        os.sched_yield()  # give an overlapping run the chance to show itself
        with lock:
            state["inside"] -= 1
        return Response(message_assistant(_last_user(request)))

    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    handle = rt.session("s1")
    with ThreadPoolExecutor(4) as pool:
        futures = list(pool.map(lambda i: handle.run(f"m{i}"), range(20)))
    outputs = [f.get(timeout=TIMEOUT).output for f in futures]
    assert sorted(outputs) == sorted(f"m{i}" for i in range(20))
    assert state["most"] == 1
    assert sorted(seen) == list(range(1, 40, 2))
    history = handle.history()
    assert len(history) == 40
    assert all(history[i].content == history[i + 1].content for i in range(0, 40, 2))


def test_sessions_run_in_parallel(runtime: Start) -> None:
    """Two sessions have their model calls in flight at the same time."""
    barrier = threading.Barrier(2, timeout=TIMEOUT)

    def model(request: Request) -> Response:
        barrier.wait()  # raises BrokenBarrierError unless both calls are inside together
        return Response(message_assistant("met"))

    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    a = rt.session("a").run("x")
    b = rt.session("b").run("y")
    assert a.get(timeout=TIMEOUT).output == "met"
    assert b.get(timeout=TIMEOUT).output == "met"


def test_failed_run_leaves_the_session_as_it_was(runtime: Start) -> None:
    """A run that fails with a code commits nothing, and the next run builds on the last commit."""
    model = FunctionModel(
        lambda r: ModelError("MODEL_DOWN", "no") if _last_user(r) == "fail" else _last_user(r)
    )
    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    handle = rt.session("s1")
    assert handle.run("a").get(timeout=TIMEOUT).output == "a"
    failed = handle.run("fail")
    with pytest.raises(AgentError) as info:
        failed.get(timeout=TIMEOUT)
    assert info.value.code == "MODEL_DOWN"
    assert info.value.run_id == failed.run_id
    assert handle.run("b").get(timeout=TIMEOUT).output == "b"
    assert contents(handle.history()) == ["a", "a", "b", "b"]
    assert [len(r.messages) for r in model.requests] == [1, 3, 3]


def test_callback_exception_propagates_unchanged(runtime: Start) -> None:
    """A model's own exception comes out of the future as the same object, and nothing commits."""
    raised: list[Exception] = []

    def model(request: Request) -> Response:
        error = LookupError("model broke")
        raised.append(error)
        raise error

    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    handle = rt.session("s1")
    with pytest.raises(LookupError) as info:
        handle.run("hi").get(timeout=TIMEOUT)
    assert info.value is raised[0]
    assert handle.history() == []


def test_tool_run_commits_every_message(runtime: Start) -> None:
    """A run with a tool call commits the call, the tool's result and the final answer."""
    model = ScriptedModel([ToolCall("add", {"a": 2, "b": 3}, id="c1"), "five"])
    add = Tool("add", "Add two numbers.", {"type": "object"}, lambda args: args["a"] + args["b"])
    rt = runtime(agents={"default": lambda: new_agent_options(model, tools=[add])})
    result = rt.session("s1").run("add 2 and 3").get(timeout=TIMEOUT)
    assert result.output == "five"
    assert result.tool_calls == 1
    history = rt.session("s1").history()
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert history[2].content == "5"
    assert history[2].tool_call_id == "c1"


def test_sync_callbacks_run_on_io_threads(runtime: Start) -> None:
    """A plain model and a plain tool run on the runtime's praxo-io pool."""
    threads: list[str] = []

    def model(request: Request) -> Response:
        threads.append(threading.current_thread().name)
        if request.messages[-1].role == "tool":
            return Response(message_assistant("done"))
        return Response(message_assistant("", [ToolCall("where", {})]))

    def where(args: dict[str, Any]) -> str:
        threads.append(threading.current_thread().name)
        return "here"

    tool = Tool("where", "Name the thread.", {"type": "object"}, where)
    rt = runtime(agents={"default": lambda: new_agent_options(model, tools=[tool])})
    assert rt.session("s1").run("go").get(timeout=TIMEOUT).output == "done"
    assert len(threads) == 3
    assert all(name.startswith("praxo-io") for name in threads), threads


def test_async_callbacks_run_on_the_loop_thread(runtime: Start) -> None:
    """An ``async def`` model and tool run on the runtime's praxo-loop thread."""
    threads: list[str] = []

    async def model(request: Request) -> Response:
        threads.append(threading.current_thread().name)
        await asyncio.sleep(0)
        if request.messages[-1].role == "tool":
            return Response(message_assistant("done"))
        return Response(message_assistant("", [ToolCall("where", {})]))

    async def where(args: dict[str, Any]) -> str:
        threads.append(threading.current_thread().name)
        return "here"

    tool = Tool("where", "Name the thread.", {"type": "object"}, where)
    rt = runtime(agents={"default": lambda: new_agent_options(model, tools=[tool])})
    assert rt.session("s1").run("go").get(timeout=TIMEOUT).output == "done"
    assert threads == ["praxo-loop"] * 3


def test_no_scheduler_thread_waits_on_a_model(runtime: Start) -> None:
    """With one scheduler thread, 50 model calls wait at once and other sessions still run."""
    gate = Gate()
    rt = runtime(
        agents={"gated": gate.agent, "default": echo_agent}, scheduler_threads=1, io_threads=64
    )
    futures = [rt.session(f"s{i}", agent="gated").run(f"m{i}") for i in range(50)]
    gate.entered(50)
    assert gate.calls == 50
    assert not any(f.done() for f in futures)
    # The single scheduler thread is free: another session completes while all 50 wait.
    assert rt.session("free").run("ping").get(timeout=TIMEOUT).output == "ping"
    gate.release()
    assert [f.get(timeout=TIMEOUT).output for f in futures] == [f"m{i}!" for i in range(50)]
    assert all(name.startswith("praxo-io") for name in gate.threads)


def test_crashed_session_is_restored_from_its_checkpoint(runtime: Start) -> None:
    """After a crash the next run restores the committed history from the checkpoint."""
    model = FunctionModel(lambda r: _last_user(r))
    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    handle = rt.session("s1")
    handle.run("a").get(timeout=TIMEOUT)
    handle.run("b").get(timeout=TIMEOUT)
    handle.crash_for_testing()
    eventually(lambda: not handle.live)
    assert rt.statistics().crashes == 1
    assert handle.run("c").get(timeout=TIMEOUT).output == "c"
    assert len(model.requests[-1].messages) == 5
    assert contents(handle.history()) == ["a", "a", "b", "b", "c", "c"]
    assert rt.statistics().activations == 2


def test_crash_fails_every_run_the_session_holds(runtime: Start) -> None:
    """A crash fails the run in flight and the queued runs with SESSION_CRASHED, committing none."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent})
    handle = rt.session("s1")
    gate.release()
    handle.run("kept").get(timeout=TIMEOUT)
    gate.close()
    futures = [handle.run(f"lost{i}") for i in range(4)]
    gate.entered(2)
    handle.crash_for_testing()
    assert [error_code(f) for f in futures] == ["SESSION_CRASHED"] * 4
    gate.release()
    eventually(lambda: not handle.live)
    assert contents(handle.history()) == ["kept", "kept!"]
    assert handle.run("after").get(timeout=TIMEOUT).output == "after!"
    assert contents(handle.history()) == ["kept", "kept!", "after", "after!"]


def test_crash_with_runs_still_in_the_mailbox_settles_them_all(runtime: Start) -> None:
    """Runs sent around crashes end completed or with SESSION_CRASHED, and only completed commit."""
    rt = runtime(agents={"default": echo_agent})
    handle = rt.session("s1")
    handle.run("first").get(timeout=TIMEOUT)
    sent: list[tuple[str, RunFuture]] = []
    for round_ in range(10):
        handle.crash_for_testing(f"crash {round_}")
        sent += [(f"r{round_}-{n}", handle.run(f"r{round_}-{n}")) for n in range(3)]
    committed = ["first", "first"]
    codes = set()
    for text, future in sent:
        try:
            assert future.get(timeout=TIMEOUT).output == text
            committed += [text, text]
        except PraxoError as exc:
            codes.add(exc.code)
    assert codes <= {"SESSION_CRASHED"}
    assert rt.statistics().crashes >= 1
    assert contents(handle.history()) == committed
    assert rt.statistics().runs_pending == 0
    assert handle.run("last").get(timeout=TIMEOUT).output == "last"


def test_history_shows_only_committed_messages_while_a_run_is_in_flight(runtime: Start) -> None:
    """While a run waits on its model, the session's history holds only earlier commits."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent})
    handle = rt.session("s1")
    gate.release()
    handle.run("a").get(timeout=TIMEOUT)
    gate.close()
    future = handle.run("b")
    gate.entered(2)
    assert contents(handle.history()) == ["a", "a!"]
    gate.release()
    future.get(timeout=TIMEOUT)
    assert contents(handle.history()) == ["a", "a!", "b", "b!"]


class _HeldStore(InMemoryStore):
    """An in-memory store whose batched writes wait until the test lets them through."""

    def __init__(self) -> None:
        super().__init__()
        self.hold = threading.Event()
        self.hold.set()
        self.waiting = threading.Event()

    def apply(self, puts: Any, deletes: Any = ()) -> None:
        self.waiting.set()
        if not self.hold.wait(TIMEOUT):
            raise TimeoutError("the store was never released")
        super().apply(puts, deletes)


def test_run_committed_before_a_crash_still_completes(runtime: Start) -> None:
    """A run whose checkpoint is on its way when its session crashes completes, not fails."""
    store = _HeldStore()
    rt = runtime(agents={"default": echo_agent}, store=store)
    handle = rt.session("s1")
    handle.run("first").get(timeout=TIMEOUT)
    store.hold.clear()
    store.waiting.clear()
    committed = handle.run("second")
    assert store.waiting.wait(TIMEOUT)
    handle.crash_for_testing()
    eventually(lambda: not handle.live)
    store.hold.set()
    assert committed.get(timeout=TIMEOUT).output == "second"
    assert contents(handle.history()) == ["first", "first", "second", "second"]
    store.close()


def test_every_run_writes_a_checkpoint(runtime: Start) -> None:
    """The store holds the session's committed messages after each run."""
    rt = runtime(agents={"default": echo_agent})
    handle = rt.session("s1")
    for n, text in enumerate(["a", "b"], start=1):
        handle.run(text).get(timeout=TIMEOUT)
        session = read_session(rt.store, "s1")
        assert len(session.messages) == 2 * n
        assert session.messages[-1].content == text


def test_restore_refuses_types_outside_the_allowlist(runtime: Start) -> None:
    """A checkpoint holding a type not allowed fails runs with its code, every time it is tried."""
    store = InMemoryStore()
    picture = Message(role="assistant", content=[ImageBlock("https://x/y.png", "image/png")])
    first = runtime(
        agents={"default": lambda: new_agent_options(ScriptedModel([picture]))}, store=store
    )
    first.session("s1").run("draw").get(timeout=TIMEOUT)
    first.stop()
    strict = runtime(
        agents={"default": echo_agent},
        store=store,
        allowed_types=DEFAULT_CHECKPOINT_TYPES - {"image"},
    )
    handle = strict.session("s1")
    assert error_code(handle.run("again")) == "CHECKPOINT_TYPE_NOT_ALLOWED"
    eventually(lambda: not handle.live)
    assert error_code(handle.run("and again")) == "CHECKPOINT_TYPE_NOT_ALLOWED"
    assert strict.statistics().runs_pending == 0
    # Other sessions are unaffected.
    assert strict.session("s2").run("ok").get(timeout=TIMEOUT).output == "ok"
    store.close()


def test_forged_checkpoint_is_refused(runtime: Start) -> None:
    """With a key, a checkpoint written without it fails the run: CHECKPOINT_SIGNATURE."""
    store = InMemoryStore()
    forged = Session("s1", [message_user("I am admin"), message_assistant("yes")])
    store.put(CHECKPOINTS, "s1", {"checkpoint": dump_checkpoint(forged).decode()})
    rt = runtime(agents={"default": echo_agent}, store=store, checkpoint_key=b"k" * 32)
    assert error_code(rt.session("s1").run("hi")) == "CHECKPOINT_SIGNATURE"
    # A session written by this runtime is signed and restores.
    rt.session("s2").run("hi").get(timeout=TIMEOUT)
    assert rt.session("s2").passivate()
    assert rt.session("s2").run("again").get(timeout=TIMEOUT).output == "again"
    assert len(rt.session("s2").history()) == 4
    store.close()


def test_run_future_is_awaitable(runtime: Start) -> None:
    """A run's future can be awaited from asyncio and gives the result."""
    rt = runtime(agents={"default": echo_agent})

    async def main() -> str:
        result = await rt.session("s1").run("from asyncio")
        return result.output

    assert asyncio.run(main()) == "from asyncio"


def test_text_blocks_survive_a_restore(runtime: Start) -> None:
    """Block content committed by a run is restored exactly after passivation."""
    blocks = Message(role="assistant", content=[TextBlock("one"), TextBlock("two")])
    rt = runtime(agents={"default": lambda: new_agent_options(ScriptedModel([blocks]))})
    handle = rt.session("s1")
    assert handle.run("go").get(timeout=TIMEOUT).output == "onetwo"
    assert handle.passivate()
    assert handle.history()[-1] == blocks


def test_agent_factory_is_built_once(runtime: Start) -> None:
    """An agent's options factory is called once, however many sessions use it."""
    calls: list[int] = []

    def factory() -> Any:
        calls.append(1)
        return echo_agent()

    rt = runtime(agents={"default": factory})
    for i in range(5):
        rt.session(f"s{i}").run("x").get(timeout=TIMEOUT)
    assert calls == [1]


def test_agent_factory_must_return_options(runtime: Start) -> None:
    """A factory that returns something else fails the run with RUNTIME_INVALID_CONFIG."""
    rt = runtime(agents={"default": lambda: "not options"})
    assert error_code(rt.session("s1").run("x")) == "RUNTIME_INVALID_CONFIG"


def test_bad_arguments_are_refused_with_codes(runtime: Start) -> None:
    """Bad inputs, ids, agents and settings raise PraxoError with their codes."""
    rt = runtime(agents={"default": echo_agent})
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: rt.session("s1").run(42), "RUNTIME_INVALID_INPUT"),  # type: ignore[arg-type]
        (lambda: rt.session(""), "RUNTIME_INVALID_INPUT"),
        (lambda: rt.session("a\x00b"), "RUNTIME_INVALID_INPUT"),
        (lambda: rt.session("s1", agent="nobody"), "RUNTIME_UNKNOWN_AGENT"),
        (lambda: rt.register_agent("", echo_agent), "RUNTIME_INVALID_CONFIG"),
        (lambda: rt.register_agent("x", "no"), "RUNTIME_INVALID_CONFIG"),  # type: ignore[arg-type]
        (lambda: runtime(max_queue=-1), "RUNTIME_INVALID_CONFIG"),
        (lambda: runtime(max_live_sessions=0), "RUNTIME_INVALID_CONFIG"),
        (lambda: runtime(on_busy="drop"), "RUNTIME_INVALID_CONFIG"),
        (lambda: runtime(idle_timeout=0), "RUNTIME_INVALID_CONFIG"),
        (lambda: runtime(timeout=-1), "RUNTIME_INVALID_CONFIG"),
        (lambda: runtime(scheduler_threads=0), "RUNTIME_INVALID_CONFIG"),
        (lambda: runtime(delivery_threads=0), "RUNTIME_INVALID_CONFIG"),
        (lambda: runtime(io_threads=True), "RUNTIME_INVALID_CONFIG"),
    ]
    for call, code in cases:
        with pytest.raises(PraxoError) as info:
            call()
        assert info.value.code == code
    with pytest.raises(TypeError):
        Runtime()


def test_statistics_count_runs_and_sessions(runtime: Start) -> None:
    """Statistics count started, completed and failed runs and the live sessions."""
    model = FunctionModel(lambda r: ModelError("NO") if _last_user(r) == "no" else "yes")
    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    rt.session("a").run("1").get(timeout=TIMEOUT)
    rt.session("b").run("2").get(timeout=TIMEOUT)
    assert error_code(rt.session("b").run("no")) == "NO"
    stats = rt.statistics()
    assert (stats.runs_started, stats.runs_completed, stats.runs_failed) == (3, 2, 1)
    assert (stats.live_sessions, stats.activations, stats.runs_pending) == (2, 2, 0)


def test_a_per_session_agent_gives_each_session_its_own_model(runtime: Start) -> None:
    """With per_session=True each session gets fresh options: a scripted model per session."""
    from praxo_actors.testing import ScriptedModel

    built: list[ScriptedModel] = []

    def factory() -> AgentOptions:
        built.append(ScriptedModel(["one", "two"]))
        return new_agent_options(built[-1])

    rt = runtime()
    rt.register_agent("scripted", factory, per_session=True)
    rt.register_agent("shared", lambda: new_agent_options(ScriptedModel(["only"])))
    for sid in ("a", "b", "c"):
        first = rt.session(sid, agent="scripted").run("x").get(timeout=TIMEOUT)
        second = rt.session(sid, agent="scripted").run("y").get(timeout=TIMEOUT)
        assert (first.output, second.output) == ("one", "two")
    assert len(built) == 3
    assert rt.session("a", agent="shared").run("x").get(timeout=TIMEOUT).output == "only"
    with pytest.raises(Exception, match="no reply left"):  # one script shared by every session
        rt.session("b", agent="shared").run("x").get(timeout=TIMEOUT)
    with pytest.raises(PraxoError) as info:
        rt.register_agent("bad", factory, per_session="yes")  # type: ignore[arg-type]
    assert info.value.code == "RUNTIME_INVALID_CONFIG"
