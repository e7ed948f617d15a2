"""Durable runs: the effect journal, resume after a session crash or a restart, results."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, contents, echo_agent, error_code

from praxo_actors import AgentError, PraxoError
from praxo_actors.agent import AgentOptions, Tool, new_agent_options, tool_context
from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._log import JOURNAL, PENDING
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.testing import EventRecorder
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]


class World:
    """The side effects of one test: calls counted per model step and per tool key."""

    def __init__(self, delivery: str = "at_least_once") -> None:
        self.lock = threading.Lock()
        self.model_calls: list[int] = []
        self.sent: list[str] = []
        self.waits: list[tuple[str, int]] = []
        self.entered = threading.Event()
        self.delivery = delivery

    def model(self, request: Request) -> Response:
        with self.lock:
            self.model_calls.append(request.step)
        if request.step == 1:
            calls = [ToolCall("send", {"to": "ada"}, id="c1"), ToolCall("wait", {}, id="c2")]
            return Response(message_assistant("", calls), usage={"output_tokens": 1})
        last = request.messages[-1].content
        return Response(message_assistant(f"done: {last}"), usage={"output_tokens": 2})

    def send(self, args: dict[str, Any]) -> str:
        context = tool_context()
        assert context is not None
        with self.lock:
            self.sent.append(context.idempotency_key)
        return f"sent to {args['to']}"

    async def wait(self, _args: dict[str, Any]) -> str:
        context = tool_context()
        assert context is not None
        with self.lock:
            self.waits.append((context.idempotency_key, context.attempt))
            first = len(self.waits) == 1
        if first:
            self.entered.set()
            # Cut off here: the session crashes, or the runtime stops and cancels this task.
            await asyncio.sleep(TIMEOUT)
            return "late"
        return "waited"

    def agent(self) -> AgentOptions:
        tools = [
            Tool("send", "", {}, self.send),
            Tool("wait", "", {}, self.wait, delivery=self.delivery),  # type: ignore[arg-type]
        ]
        return new_agent_options(self.model, tools=tools)


def _crash_in_wait(rt: Runtime, world: World, session_id: str = "s") -> Any:
    handle = rt.session(session_id)
    future = handle.run("go")
    assert world.entered.wait(TIMEOUT)
    handle.crash_for_testing()
    return future


def test_a_crashed_session_resumes_its_durable_run_repeating_nothing(runtime: Start) -> None:
    """The model's first step and the finished tool call are replayed, not repeated; the call
    in flight is made again (attempt 2, same key); the future completes; no SESSION_CRASHED."""
    world = World()
    store = InMemoryStore()
    rt = runtime(store=store)
    rt.register_agent("default", world.agent, durable=True)
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="*")
    future = _crash_in_wait(rt, world)
    result = future.get(timeout=TIMEOUT)
    assert result.output == 'done: "waited"'
    assert world.model_calls == [1, 2]
    assert world.sent == [f"{future.run_id}:1:0"]
    key = f"{future.run_id}:1:1"
    assert world.waits == [(key, 1), (key, 2)]
    recorder.wait_for("run.completed", TIMEOUT)
    types = recorder.types()
    assert types.count("run.resumed") == 1 and types.count("run.started") == 1
    assert types.index("run.resumed") < types.index("run.completed")
    seqs = [e.seq for e in recorder.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert rt.statistics().crashes == 1 and rt.statistics().runs_failed == 0
    assert contents(rt.session("s").history())[-1] == 'done: "waited"'
    assert list(store.search(PENDING)) == [] and list(store.search(JOURNAL)) == []
    store.close()


def test_an_at_most_once_tool_in_flight_is_not_called_again(runtime: Start) -> None:
    """Its result becomes TOOL_INTERRUPTED and the model goes on from there."""
    world = World(delivery="at_most_once")
    rt = runtime()
    rt.register_agent("default", world.agent, durable=True)
    future = _crash_in_wait(rt, world)
    result = future.get(timeout=TIMEOUT)
    assert '"TOOL_INTERRUPTED"' in result.output
    assert len(world.waits) == 1
    assert world.sent == [f"{future.run_id}:1:0"]
    assert world.model_calls == [1, 2]


def test_a_run_cut_off_by_a_stop_resumes_in_the_next_process(tmp_path: Path) -> None:
    """Stopped mid-run, the durable run's future fails; a runtime started with resume=True
    finishes it from the journal and handle.result returns it."""
    path = tmp_path / "s.sqlite3"
    world = World()
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        rt.register_agent("default", world.agent, durable=True)
        future = rt.session("s").run("go")
        assert world.entered.wait(TIMEOUT)
    finally:
        rt.stop()
    assert error_code(future) == "RUNTIME_STOPPED"
    again = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT, resume=True)
    try:
        again.register_agent("default", world.agent, durable=True)
        result = again.session("s").result(future.run_id, timeout=TIMEOUT)
        assert result.output == 'done: "waited"'
        assert world.model_calls == [1, 2]
        assert len(world.sent) == 1
        assert contents(again.session("s").history())[-1] == 'done: "waited"'
        # Kept: asked again, the result comes from the store.
        assert again.session("s").result(future.run_id, timeout=TIMEOUT).output == result.output
    finally:
        again.stop()


def test_resume_pending_restores_every_journaled_session(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    worlds = [World() for _ in range(3)]
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    futures = []
    try:
        for i, world in enumerate(worlds):
            rt.register_agent(f"a{i}", world.agent, durable=True)
            futures.append(rt.session(f"s{i}", agent=f"a{i}").run("go"))
            assert world.entered.wait(TIMEOUT)
    finally:
        rt.stop()
        again = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        for i, world in enumerate(worlds[:2]):
            again.register_agent(f"a{i}", world.agent, durable=True)
        assert again.resume_pending() == 2  # a2 is not registered: left for later
        for i in range(2):
            got = again.session(f"s{i}", agent=f"a{i}").result(futures[i].run_id, timeout=TIMEOUT)
            assert got.output == 'done: "waited"'
        again.register_agent("a2", worlds[2].agent, durable=True)
        assert again.resume_pending() == 1
        got = again.session("s2", agent="a2").result(futures[2].run_id, timeout=TIMEOUT)
        assert got.output == 'done: "waited"'
        assert all(len(w.sent) == 1 and w.model_calls == [1, 2] for w in worlds)
    finally:
        again.stop()


def test_results_of_past_runs_and_their_errors(runtime: Start) -> None:
    from praxo_actors.models import ModelError
    from praxo_actors.testing import ScriptedModel

    rt = runtime(agents={"default": echo_agent})
    rt.register_agent(
        "failing", lambda: new_agent_options(ScriptedModel([ModelError("MODEL_DOWN", "down")]))
    )
    handle = rt.session("s")
    done = handle.run("hi")
    assert done.get(timeout=TIMEOUT).output == "hi"
    assert handle.passivate()
    kept = handle.result(done.run_id, timeout=TIMEOUT)
    assert kept.output == "hi" and kept.run_id == done.run_id
    assert contents(kept.session.messages) == ["hi", "hi"]
    failed = rt.session("s", agent="failing").run("x")
    assert error_code(failed) == "MODEL_DOWN"
    with pytest.raises(AgentError) as info:
        handle.result(failed.run_id, timeout=TIMEOUT)
    assert info.value.code == "MODEL_DOWN"
    with pytest.raises(PraxoError) as unknown:
        handle.result("run-nope", timeout=TIMEOUT)
    assert unknown.value.code == "RUNTIME_UNKNOWN_RUN"


KEY = b"k" * 32


def _stopped_mid_run(path: Path, world: World) -> tuple[str, list[Any], list[Any]]:
    """A signed durable run stopped in its tool; its run id, journal and pending records."""
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT, checkpoint_key=KEY)
    try:
        rt.register_agent("default", world.agent, durable=True)
        future = rt.session("s").run("go")
        assert world.entered.wait(TIMEOUT)
        return future.run_id, list(rt.store.search(JOURNAL)), list(rt.store.search(PENDING))
    finally:
        rt.stop()


def test_a_forged_journal_entry_fails_the_resumed_run(runtime: Start, tmp_path: Path) -> None:
    """With a key, an entry the key did not sign fails the resume with CHECKPOINT_SIGNATURE."""
    path, key = tmp_path / "s.sqlite3", KEY
    world = World()
    run_id, entries, _ = _stopped_mid_run(path, world)
    assert len(entries) == 2
    forged = entries[1].value["entry"].replace("sent to ada", "sent to eve")
    from praxo_actors.memory import SQLiteStore

    with SQLiteStore(path) as store:
        store.put(JOURNAL, entries[1].key, {"entry": forged})
    again = runtime(store=str(path), checkpoint_key=key, resume=True)
    again.register_agent("default", world.agent, durable=True)
    with pytest.raises(PraxoError) as info:
        again.session("s").result(run_id, timeout=TIMEOUT)
    assert info.value.code == "CHECKPOINT_SIGNATURE"
    eventually(lambda: again.statistics().runs_pending == 0)


def test_result_of_a_forged_pending_run_fails_with_its_code_at_once(
    runtime: Start, tmp_path: Path
) -> None:
    """handle.result wakes the session to resume the run its store names; when the session
    refuses the forged pending record, the waiting call hears CHECKPOINT_SIGNATURE then, not
    RUNTIME_TIMEOUT at the end of its timeout."""
    path = tmp_path / "s.sqlite3"
    world = World()
    run_id, _, (pending,) = _stopped_mid_run(path, world)
    from praxo_actors.memory import SQLiteStore

    with SQLiteStore(path) as store:
        store.put(PENDING, pending.key, {**pending.value, "input": "something else"})
    again = runtime(store=str(path), checkpoint_key=KEY)  # not resumed until asked for
    again.register_agent("default", world.agent, durable=True)
    with pytest.raises(PraxoError) as info:
        again.session("s").result(run_id, timeout=60)
    assert info.value.code == "CHECKPOINT_SIGNATURE"


def test_a_resumed_approval_cut_off_by_a_crash_resumes_with_its_answer(runtime: Start) -> None:
    """A durable run resumed from an approval and crashed mid-tool goes on with the same answer."""
    from praxo_actors.middleware import require_approval

    world = World()
    world.entered.clear()

    def agent() -> AgentOptions:
        options = world.agent()
        return new_agent_options(
            options.model, tools=list(options.tools), approval=require_approval(["wait"])
        )

    rt = runtime()
    rt.register_agent("default", agent, durable=True)
    handle = rt.session("s")
    stopped = handle.run("go").get(timeout=TIMEOUT)
    assert stopped.status == "interrupted"
    assert stopped.interrupt["approval"]["tool"] == "wait"
    assert len(world.sent) == 1  # send ran before the approval was asked
    resumed = handle.resume({"approved": True, "arguments": {"edited": True}})
    assert world.entered.wait(TIMEOUT)
    handle.crash_for_testing()
    result = resumed.get(timeout=TIMEOUT)
    assert result.run_id == stopped.run_id and result.output == 'done: "waited"'
    assert len(world.sent) == 1 and world.model_calls == [1, 2]
    # at_least_once: the call in flight is made again, under the same key.
    assert len(world.waits) == 2 and world.waits[0][0] == world.waits[1][0]


def test_a_forged_kept_result_is_refused_with_a_key(runtime: Start) -> None:
    """With a key, a result document a store writer edited is CHECKPOINT_SIGNATURE."""
    from praxo_actors.memory._log import RESULTS

    store = InMemoryStore()
    rt = runtime(agents={"default": echo_agent}, store=store, checkpoint_key=b"k" * 32)
    done = rt.session("s").run("hi")
    assert done.get(timeout=TIMEOUT).output == "hi"
    assert rt.session("s").result(done.run_id, timeout=TIMEOUT).output == "hi"
    (item,) = list(store.search(RESULTS))
    store.put(RESULTS, item.key, {**item.value, "output": "pwned"})
    with pytest.raises(PraxoError) as info:
        rt.session("s").result(done.run_id, timeout=TIMEOUT)
    assert info.value.code == "CHECKPOINT_SIGNATURE"
    store.close()
