"""Sessions on the event loop: where code runs, what may not block there, and the caller's loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pykka
import pytest
from _helpers import assert_no_new_threads
from _runtime_helpers import TIMEOUT, contents, echo_agent, error_code

from praxo_actors import PraxoError
from praxo_actors.actors import MNFuture
from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import RunFuture, Runtime
from praxo_actors.testing import ScriptedModel

Start = Callable[..., Runtime]


def _async_agent(seen: list[str]) -> Callable[[], AgentOptions]:
    async def model(request: Request) -> Response:
        seen.append(threading.current_thread().name)
        return Response(message_assistant(f"{request.messages[-1].content}!"))

    return lambda: new_agent_options(model)


def test_an_async_model_runs_on_the_loop_thread(runtime: Start) -> None:
    """By default an async model runs on the runtime's loop thread, beside its session."""
    seen: list[str] = []
    rt = runtime(agents={"default": _async_agent(seen)})
    assert rt.session("s").run("hi").get(timeout=TIMEOUT).output == "hi!"
    assert seen == ["praxo-loop"]


def test_sessions_on_scheduler_threads_still_call_async_models_on_the_loop(
    runtime: Start,
) -> None:
    """With scheduler_threads set, runs complete and async callbacks still run on the loop."""
    seen: list[str] = []
    rt = runtime(agents={"default": _async_agent(seen)}, scheduler_threads=2)
    futures = [rt.session(f"s{i}").run(f"m{i}") for i in range(20)]
    assert [f.get(timeout=TIMEOUT).output for f in futures] == [f"m{i}!" for i in range(20)]
    assert set(seen) == {"praxo-loop"}
    assert rt.statistics().runs_completed == 20


def test_a_blocking_wait_on_the_loop_thread_fails_with_a_code(runtime: Start) -> None:
    """An async model that waits on another run's future gets RUNTIME_BLOCKING_CALL."""
    box: dict[str, RunFuture] = {}

    async def model(request: Request) -> Response:
        box["other"].get(timeout=TIMEOUT)
        return Response(message_assistant("never"))

    rt = runtime(agents={"default": echo_agent, "waits": lambda: new_agent_options(model)})
    gate = threading.Event()

    def slow(request: Request) -> Response:
        gate.wait(TIMEOUT)
        return Response(message_assistant("slow"))

    rt.register_agent("slow", lambda: new_agent_options(slow))
    box["other"] = rt.session("other", agent="slow").run("x")
    assert error_code(rt.session("s", agent="waits").run("go")) == "RUNTIME_BLOCKING_CALL"
    gate.set()
    assert box["other"].get(timeout=TIMEOUT).output == "slow"


def test_stop_on_the_loop_thread_fails_with_a_code(runtime: Start) -> None:
    """Runtime.stop() called from an async callback raises RUNTIME_BLOCKING_CALL."""
    holder: dict[str, Runtime] = {}

    async def model(request: Request) -> Response:
        holder["rt"].stop()
        return Response(message_assistant("stopped?"))

    rt = holder["rt"] = runtime(agents={"default": lambda: new_agent_options(model)})
    assert error_code(rt.session("s").run("x")) == "RUNTIME_BLOCKING_CALL"
    rt.register_agent("echo", echo_agent)
    assert rt.session("t", agent="echo").run("still up").get(timeout=TIMEOUT).output == "still up"
    assert rt.statistics().runs_failed == 1


@pytest.mark.parametrize("subscribed", [False, True])
@pytest.mark.parametrize("kind", ["async", "sync"])
@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit, StopIteration])
def test_a_base_exception_in_a_callback_fails_only_its_run(
    runtime: Start, kind: str, error: type[BaseException], subscribed: bool
) -> None:
    """A callback's KeyboardInterrupt, SystemExit or StopIteration reaches the caller unchanged,
    also when a subscriber is told of the failure first."""
    raised: list[BaseException] = []

    def fail() -> Response:
        raised.append(error("from the model"))
        raise raised[-1]

    async def amodel(request: Request) -> Response:
        return fail()

    def smodel(request: Request) -> Response:
        return fail()

    model = amodel if kind == "async" else smodel
    rt = runtime(agents={"default": echo_agent, "bad": lambda: new_agent_options(model)})
    failures: list[Any] = []
    if subscribed:
        rt.events.subscribe(failures.append, pattern="run.failed")
    for _ in range(2):  # the loop and the I/O threads survive it, twice
        if kind == "async" and error is StopIteration:
            # Python itself turns a StopIteration leaving a coroutine into RuntimeError (PEP 479).
            with pytest.raises(RuntimeError) as wrapped:
                rt.session("s", agent="bad").run("x").get(timeout=TIMEOUT)
            assert wrapped.value.__cause__ is raised[-1]
            continue
        with pytest.raises(error) as info:
            rt.session("s", agent="bad").run("x").get(timeout=TIMEOUT)
        assert info.value is raised[-1]
    assert rt.session("t").run("fine").get(timeout=TIMEOUT).output == "fine"
    assert rt.session("s", agent="bad").history() == []


def test_an_async_callback_exception_is_the_same_object(runtime: Start) -> None:
    """An async model's own exception comes out of the future unchanged (the same object)."""
    raised: list[Exception] = []

    async def model(request: Request) -> Response:
        raised.append(LookupError("async broke"))
        raise raised[-1]

    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    with pytest.raises(LookupError) as info:
        rt.session("s").run("x").get(timeout=TIMEOUT)
    assert info.value is raised[0]


def test_a_tool_value_that_is_not_json_fails_the_run(runtime: Start) -> None:
    """A tool that returns a set fails its run with a TypeError, committing nothing."""
    tool = Tool("bad", "returns a set", {"type": "object"}, lambda args: {1, 2})
    model = ScriptedModel([ToolCall("bad", {}), "done"])
    rt = runtime(agents={"default": lambda: new_agent_options(model, tools=[tool])})
    with pytest.raises(TypeError, match="not JSON"):
        rt.session("s").run("x").get(timeout=TIMEOUT)
    assert rt.session("s").history() == []


def test_a_tool_result_reaches_the_model_as_a_copy(runtime: Start) -> None:
    """The tool's returned dict is not the object the run keeps (it crossed as a message)."""
    returned: list[dict[str, Any]] = []

    def handler(args: dict[str, Any]) -> dict[str, Any]:
        returned.append({"rows": [1, 2]})
        return returned[-1]

    tool = Tool("t", "rows", {"type": "object"}, handler)
    model = ScriptedModel([ToolCall("t", {}, id="c1"), "ok"])
    rt = runtime(agents={"default": lambda: new_agent_options(model, tools=[tool])})
    assert rt.session("s").run("x").get(timeout=TIMEOUT).output == "ok"
    returned[0]["rows"].append(3)  # mutating the original changes nothing committed
    tool_message = rt.session("s").history()[2]
    assert tool_message.content == '{"rows":[1,2]}'


def test_a_thousand_new_sessions_start_in_a_few_batches(
    runtime: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1,200 new sessions cost a few start_children messages and store reads, not 1,200."""
    from praxo_actors.memory import InMemoryStore
    from supervisors import DynamicSupervisor

    calls: list[int] = []
    original = DynamicSupervisor.start_children

    def counting(self: DynamicSupervisor, specs: list[Any], *args: Any) -> Any:
        calls.append(len(specs))
        return original(self, specs, *args)

    monkeypatch.setattr(DynamicSupervisor, "start_children", counting)

    class CountingStore(InMemoryStore):
        reads: list[int] = []  # noqa: RUF012 - one store per test
        gets = 0

        def get_many(self, namespace: Any, keys: Any) -> Any:
            if tuple(namespace) == ("praxo", "pending"):  # read once per restore, never after
                self.reads.append(len(keys))
            return super().get_many(namespace, keys)

        def get(self, namespace: Any, key: str) -> Any:
            CountingStore.gets += 1
            return super().get(namespace, key)

    store = CountingStore()
    rt = runtime(agents={"default": echo_agent}, store=store)
    futures = [rt.session(f"s{i}").run(f"m{i}") for i in range(1200)]
    assert [f.get(timeout=TIMEOUT).output for f in futures] == [f"m{i}" for i in range(1200)]
    assert sum(calls) == 1200 and len(calls) <= 12
    assert sum(store.reads) == 1200 and len(store.reads) <= 12
    assert CountingStore.gets == 0
    assert rt.statistics().activations == 1200


def test_a_log_copied_from_another_session_is_refused(runtime: Start) -> None:
    """Bob's rows holding alice's signed log fail bob's run with CHECKPOINT_SIGNATURE."""
    rt = runtime(agents={"default": echo_agent}, checkpoint_key=b"k" * 32)
    rt.session("alice").run("secret").get(timeout=TIMEOUT)
    rt.session("alice").passivate(timeout=TIMEOUT)
    copied = 0
    for namespace in (("praxo", "heads"), ("praxo", "sessions"), ("praxo", "records")):
        for item in rt.store.search(namespace):
            if item.key == "alice" or item.key.startswith("alice#"):
                rt.store.put(namespace, "bob" + item.key[len("alice") :], item.value)
                copied += 1
    assert copied >= 2
    assert error_code(rt.session("bob").run("hi")) == "CHECKPOINT_SIGNATURE"
    assert contents(rt.session("alice").history()) == ["secret", "secret"]


def test_the_runtime_opens_on_the_callers_loop() -> None:
    """Runtime.open runs sessions on the caller's loop: no loop thread, tasks and waits work."""
    before = set(threading.enumerate())
    seen: list[str] = []

    async def main() -> None:
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as rt:
            assert not any(t.name == "praxo-loop" for t in threading.enumerate())
            rt.register_agent("default", _async_agent(seen))
            handle = rt.session("s")
            assert (await handle.arun("a")).output == "a!"
            task = asyncio.create_task(handle.arun("b"))
            done, _ = await asyncio.wait([task], timeout=TIMEOUT)
            assert task in done and task.result().output == "b!"
            results = await asyncio.gather(*(rt.session(f"g{i}").arun("x") for i in range(50)))
            assert {r.output for r in results} == {"x!"}
            pending = handle.run("c")
            with pytest.raises(PraxoError) as info:
                pending.get(timeout=TIMEOUT)
            assert info.value.code == "RUNTIME_BLOCKING_CALL"
            assert (await pending).output == "c!"  # refusing the wait cancelled nothing
            assert contents(await handle.ahistory()) == ["a", "a!", "b", "b!", "c", "c!"]
            assert rt.statistics().runs_completed == 53
        # The loop thread is an ordinary one again: a short wait times out, it is not refused.
        with pytest.raises(pykka.Timeout):
            MNFuture[None]().get(timeout=0.01)

    asyncio.run(main())
    assert set(seen) == {"MainThread"}
    assert_no_new_threads(before, TIMEOUT)


def test_astart_and_astop_leave_nothing_behind() -> None:
    """await Runtime.astart / astop start and stop the tree without blocking the loop."""
    before = set(threading.enumerate())

    async def main() -> None:
        rt = await Runtime.astart(idle_timeout=None, timeout=TIMEOUT)
        rt.register_agent("default", echo_agent)
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        ticker = asyncio.create_task(tick())
        assert (await rt.session("s").arun("hi")).output == "hi"
        await rt.astop()
        await rt.astop()  # idempotent
        ticker.cancel()
        assert ticks > 0
        assert error_code(rt.session("s").run("late")) == "RUNTIME_STOPPED"

    asyncio.run(main())
    assert_no_new_threads(before, TIMEOUT)


def test_a_blocking_ask_to_a_runtime_actor_on_the_loop_fails_with_a_code(runtime: Start) -> None:
    """An async tool that asks the store actor and blocks gets RUNTIME_BLOCKING_CALL."""
    from praxo_actors.runtime._protocol import LoadSessions, encode

    holder: dict[str, Runtime] = {}

    async def handler(args: dict[str, Any]) -> str:
        store = holder["rt"]._store_ref
        return str(store.ask(encode(LoadSessions(["s"])), block=True, timeout=TIMEOUT))

    tool = Tool("peek", "asks the store", {"type": "object"}, handler)
    model = ScriptedModel([ToolCall("peek", {}), "done"])
    rt = holder["rt"] = runtime(agents={"default": lambda: new_agent_options(model, tools=[tool])})
    assert error_code(rt.session("s").run("x")) == "RUNTIME_BLOCKING_CALL"
    rt.register_agent("echo", echo_agent)
    assert rt.session("t", agent="echo").run("still up").get(timeout=TIMEOUT).output == "still up"


def test_a_second_astop_returns_once_the_runtime_has_stopped(tmp_path: Any) -> None:
    """Two astop() calls at once both return only when the store is free again."""
    path = tmp_path / "s.sqlite3"

    async def main() -> None:
        rt = await Runtime.astart(path, idle_timeout=None, timeout=TIMEOUT)
        first = asyncio.create_task(rt.astop())
        await asyncio.sleep(0)  # let the first stop begin
        await rt.astop()
        again = await Runtime.astart(path, idle_timeout=None, timeout=TIMEOUT)
        await again.astop()
        await first

    asyncio.run(main())


def test_refused_runs_are_counted(runtime: Start) -> None:
    """Runs refused at admission are counted in runs_refused, not in started or failed."""
    gate = threading.Event()

    def slow(request: Request) -> Response:
        gate.wait(TIMEOUT)
        return Response(message_assistant("done"))

    rt = runtime(agents={"default": lambda: new_agent_options(slow)}, on_busy="reject")
    running = rt.session("s").run("a")
    codes = [error_code(rt.session("s").run("b")) for _ in range(3)]
    gate.set()
    assert running.get(timeout=TIMEOUT).output == "done"
    assert codes == ["SESSION_BUSY"] * 3
    stats = rt.statistics()
    assert (stats.runs_started, stats.runs_refused, stats.runs_failed) == (1, 3, 0)
