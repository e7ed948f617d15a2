"""``runtime.result(run_id)`` with no session handle, ``session(id)`` keeping its agent, and
``runtime.agents()``."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import captured_logs
from _runtime_helpers import TIMEOUT, echo_agent, error_code

from praxo_actors import AgentError, PraxoError
from praxo_actors.agent import AgentOptions, new_agent_options
from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._log import RESULTS_KEPT
from praxo_actors.memory._runs import RUNS
from praxo_actors.models import ModelError, Request, Response, message_assistant
from praxo_actors.runtime import RegisteredAgent, Runtime

Start = Callable[..., Runtime]


class Gate:
    """A model that answers ``done <input>`` once the test lets it go (or at once, if open)."""

    def __init__(self, open: bool = False) -> None:
        self.go = threading.Event()
        if open:
            self.go.set()
        self.entered = threading.Event()
        self.calls = 0

    def model(self, request: Request) -> Response:
        self.calls += 1
        self.entered.set()
        assert self.go.wait(TIMEOUT * 3)
        return Response(message_assistant(f"done {request.messages[-1].content}"))

    def agent(self) -> AgentOptions:
        return new_agent_options(self.model)


def _down(_request: Request) -> ModelError:
    return ModelError("MODEL_DOWN", "down")


def _failing() -> AgentOptions:
    return new_agent_options(_down)


def _code(call: Callable[[], Any]) -> str:
    with pytest.raises(PraxoError) as info:
        call()
    return info.value.code


# -- result by id ---------------------------------------------------------------------------


def test_a_pending_run_is_waited_for_and_a_short_wait_times_out_with_a_code(
    runtime: Start,
) -> None:
    gate = Gate()
    rt = runtime(agents={"default": gate.agent})
    run_id = rt.session("s").submit("hi")
    assert gate.entered.wait(TIMEOUT)
    assert _code(lambda: rt.result(run_id, timeout=0)) == "RUNTIME_TIMEOUT"
    assert _code(lambda: rt.result(run_id, timeout=0.01)) == "RUNTIME_TIMEOUT"
    gate.go.set()
    result = rt.result(run_id, timeout=TIMEOUT)
    assert (result.run_id, result.output) == (run_id, "done hi")
    assert result.session.id == "s"


def test_a_finished_run_is_read_from_its_sessions_kept_results(runtime: Start) -> None:
    rt = runtime(agents={"default": echo_agent})
    handle = rt.session("s")
    first = handle.run("one").get(timeout=TIMEOUT)
    handle.run("two").get(timeout=TIMEOUT)
    assert handle.passivate()  # neither pending nor live: only the store knows it
    kept = rt.result(first.run_id, timeout=TIMEOUT)
    assert (kept.run_id, kept.output, kept.session.id) == (first.run_id, "one", "s")
    assert [m.content for m in kept.session.messages] == ["one", "one", "two", "two"]


def test_a_failed_run_raises_its_code(runtime: Start) -> None:
    rt = runtime(agents={"default": echo_agent})
    rt.register_agent("failing", _failing)
    future = rt.session("s", "failing").run("x")
    assert error_code(future) == "MODEL_DOWN"
    assert rt.session("s").passivate()
    with pytest.raises(AgentError) as info:
        rt.result(future.run_id, timeout=TIMEOUT)
    assert (info.value.code, info.value.run_id) == ("MODEL_DOWN", future.run_id)


def test_an_unknown_run_and_bad_arguments_are_refused_with_codes(runtime: Start) -> None:
    rt = runtime(agents={"default": echo_agent})
    rt.session("s").run("hi").get(timeout=TIMEOUT)
    assert _code(lambda: rt.result("run_nobody_knows", timeout=TIMEOUT)) == "RUNTIME_UNKNOWN_RUN"
    for run_id, timeout in (("", 1.0), (3, 1.0), ("r", -1.0), ("r", True), ("r", float("nan"))):
        bad = lambda r=run_id, t=timeout: rt.result(r, timeout=t)  # noqa: E731
        assert _code(bad) == "RUNTIME_INVALID_INPUT"


def test_a_finished_run_is_found_after_a_restart(runtime: Start, tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        rt.register_agent("default", echo_agent)
        rt.register_agent("failing", _failing)
        done = rt.session("a").run("hello").get(timeout=TIMEOUT)
        failed = rt.session("b", "failing").run("x")
        assert error_code(failed) == "MODEL_DOWN"
    finally:
        rt.stop()
    again = runtime(agents={"default": echo_agent}, store=path)
    assert again.result(done.run_id, timeout=TIMEOUT).output == "hello"
    with pytest.raises(AgentError) as info:
        again.result(failed.run_id, timeout=TIMEOUT)
    assert info.value.code == "MODEL_DOWN"


def test_result_by_id_and_the_remembered_agent_on_postgres(postgres_dsn: str) -> None:
    """The index is the session log's: on PostgreSQL too, a run is found by its id in the next
    process, and the session keeps its agent."""
    from praxo_actors.memory import PostgresStore

    store = PostgresStore(postgres_dsn, schema="praxo_test_result_by_id")
    try:
        with Runtime.start(store, idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", _named("default"))
            rt.register_agent("other", _named("other"))
            done = rt.session("s", "other").run("hi").get(timeout=TIMEOUT)
        with Runtime.start(store, idle_timeout=None, timeout=TIMEOUT) as again:
            again.register_agent("default", _named("default"))
            again.register_agent("other", _named("other"))
            kept = again.result(done.run_id, timeout=TIMEOUT)
            assert (kept.output, kept.session.id) == ("other: hi", "s")
            assert again.session("s").run("more").get(timeout=TIMEOUT).output == "other: more"
            assert _code(lambda: again.result("run_nope", timeout=TIMEOUT)) == "RUNTIME_UNKNOWN_RUN"
    finally:
        store.close()


def test_a_durable_run_journaled_by_a_previous_process_is_resumed(
    runtime: Start, tmp_path: Path
) -> None:
    """Stopped mid-run (its model call held), the durable run is journaled; the next process,
    with no ``resume=True``, finds it by its id alone, resumes it and returns its result; so is
    a run that was accepted behind it and never began."""
    path = tmp_path / "s.sqlite3"
    gate = Gate()
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        rt.register_agent("default", gate.agent, durable=True)
        handle = rt.session("s")
        cut = handle.submit("first")
        assert gate.entered.wait(TIMEOUT)
        queued = handle.submit("second")
    finally:
        rt.stop()
        gate.go.set()
    again_gate = Gate(open=True)
    again = runtime(store=path)
    again.register_agent("default", again_gate.agent, durable=True)
    assert again.result(cut, timeout=TIMEOUT).output == "done first"
    assert again.result(queued, timeout=TIMEOUT).output == "done second"
    assert again_gate.calls == 2
    assert again.result(cut, timeout=TIMEOUT).output == "done first"  # now a kept result


def test_aresult_on_the_runtimes_own_loop() -> None:
    release: asyncio.Event | None = None

    async def model(request: Request) -> Response:
        assert release is not None
        await release.wait()
        return Response(message_assistant(f"done {request.messages[-1].content}"))

    async def main() -> None:
        nonlocal release
        release = asyncio.Event()
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", lambda: new_agent_options(model))
            run_id = await rt.session("s").asubmit("hi")
            with pytest.raises(PraxoError) as info:
                await rt.aresult(run_id, timeout=0)
            assert info.value.code == "RUNTIME_TIMEOUT"
            with pytest.raises(PraxoError) as blocking:
                rt.result(run_id)
            assert blocking.value.code == "RUNTIME_BLOCKING_CALL"
            release.set()
            assert (await rt.aresult(run_id, timeout=TIMEOUT)).output == "done hi"
            assert await rt.session("s").apassivate()
            assert (await rt.aresult(run_id, timeout=TIMEOUT)).output == "done hi"
            with pytest.raises(PraxoError) as unknown:
                await rt.aresult("run_nobody_knows", timeout=TIMEOUT)
            assert unknown.value.code == "RUNTIME_UNKNOWN_RUN"

    asyncio.run(main())


def test_the_index_holds_one_row_per_kept_result(runtime: Start) -> None:
    """Past the 100 results a session keeps, the oldest runs leave the index with their
    results: they are unknown by id, the kept ones are found."""
    store = InMemoryStore()
    rt = runtime(agents={"default": echo_agent}, store=store)
    handle = rt.session("s")
    ids = [handle.run(f"m{i}").get(timeout=TIMEOUT).run_id for i in range(RESULTS_KEPT + 3)]
    rt.session("t").run("other").get(timeout=TIMEOUT)
    rows = {item.key: item.value["session"] for item in store.search(RUNS, limit=1000)}
    assert len(rows) == RESULTS_KEPT + 1
    assert set(rows) == {*ids[3:], *(k for k, v in rows.items() if v == "t")}
    assert _code(lambda: rt.result(ids[2], timeout=TIMEOUT)) == "RUNTIME_UNKNOWN_RUN"
    assert rt.result(ids[3], timeout=TIMEOUT).output == "m3"


# -- a session keeps its agent ------------------------------------------------------------------


def _named(name: str) -> Callable[[], AgentOptions]:
    """An agent whose model answers ``<name>: <input>``."""

    def model(request: Request) -> Response:
        return Response(message_assistant(f"{name}: {request.messages[-1].content}"))

    return lambda: new_agent_options(model)


def test_a_session_keeps_the_agent_it_was_last_run_with(runtime: Start) -> None:
    rt = runtime(agents={"default": _named("default"), "other": _named("other")})
    assert rt.session("new").run("hi").get(timeout=TIMEOUT).output == "default: hi"
    assert rt.session("new").agent == "default"
    gate = Gate()
    rt.register_agent("held", gate.agent)
    future = rt.session("s", "held").run("hi")
    assert gate.entered.wait(TIMEOUT)
    assert rt.session("s").agent == "held"  # live, its run still going
    queued = rt.session("s").run("next")  # queued behind it: run by the same agent
    gate.go.set()
    assert future.get(timeout=TIMEOUT).output == "done hi"
    assert queued.get(timeout=TIMEOUT).output == "done next"
    assert rt.session("s", "other").run("again").get(timeout=TIMEOUT).output == "other: again"
    assert rt.session("s").run("more").get(timeout=TIMEOUT).output == "other: more"
    assert rt.session("s").agent == "other"
    assert rt.session("s").passivate()
    assert rt.session("s").agent == "other"  # read from the log's head
    assert rt.session("s").run("back").get(timeout=TIMEOUT).output == "other: back"
    named = rt.session("s", "default")  # a name given still wins
    assert named.run("x").get(timeout=TIMEOUT).output == "default: x"
    assert _code(lambda: rt.session("s", 3)) == "RUNTIME_INVALID_INPUT"  # type: ignore[arg-type]


def test_a_failed_run_leaves_the_remembered_agent_as_it_was(runtime: Start) -> None:
    """A run that failed changed nothing in the session: live, as after a restore (the log's
    head names the agent of the last run committed), the session keeps the agent before it."""
    rt = runtime(agents={"default": _named("default"), "other": _named("other")})
    rt.register_agent("failing", _failing)
    rt.session("s", "other").run("a").get(timeout=TIMEOUT)
    assert error_code(rt.session("s", "failing").run("x")) == "MODEL_DOWN"
    assert rt.session("s").agent == "other"
    assert rt.session("s").run("b").get(timeout=TIMEOUT).output == "other: b"
    assert error_code(rt.session("f", "failing").run("x")) == "MODEL_DOWN"
    assert rt.session("f").run("c").get(timeout=TIMEOUT).output == "default: c"


def test_a_restored_session_keeps_its_agent(runtime: Start, tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        rt.register_agent("default", _named("default"))
        rt.register_agent("other", _named("other"))
        rt.session("s", "other").run("hi").get(timeout=TIMEOUT)
    finally:
        rt.stop()
    again = runtime(agents={"default": _named("default")}, store=path)
    assert again.session("s").agent == "other"
    # Remembered, but not registered in this process: the run says so.
    assert error_code(again.session("s").run("x")) == "RUNTIME_UNKNOWN_AGENT"
    again.register_agent("other", _named("other"))
    assert again.session("s").run("more").get(timeout=TIMEOUT).output == "other: more"
    assert again.session("fresh").run("new").get(timeout=TIMEOUT).output == "default: new"


def test_with_a_durable_agent_the_handle_reads_the_agent_before_the_run(
    runtime: Start, tmp_path: Path
) -> None:
    """A durable agent's run must be known as durable when it is submitted (it is in the
    store before ``submit`` returns): the handle reads the session's agent first."""
    rt = runtime(agents={"default": _named("default")}, store=tmp_path / "s.sqlite3")
    rt.register_agent("keeper", _named("keeper"), durable=True)
    rt.session("s", "keeper").run("one").get(timeout=TIMEOUT)
    assert rt.session("s").passivate()
    handle = rt.session("s")
    run_id = handle.submit("two")
    assert handle.agent == "keeper"
    assert rt.result(run_id, timeout=TIMEOUT).output == "keeper: two"


def test_a_handle_naming_no_agent_beside_a_durable_agent(
    runtime: Start, caplog: pytest.LogCaptureFixture
) -> None:
    """With a durable agent registered, a run of a handle naming no agent is submitted as
    possibly durable: a session whose agent is not durable lets ``submit`` return at once
    (its run still going), one whose agent is durable puts it in its inbox first."""
    gate = Gate()
    rt = runtime(agents={"default": gate.agent})
    rt.register_agent("keeper", _named("keeper"), durable=True)
    with captured_logs(caplog, "praxo_actors.runtime", logging.WARNING) as logged:
        run_id = rt.session("s").submit("hi")  # "default": not durable
        assert gate.entered.wait(TIMEOUT)
        assert _code(lambda: rt.result(run_id, timeout=0)) == "RUNTIME_TIMEOUT"
    assert [e["event"] for e in logged] == []  # no "run_not_journaled_yet": it returned
    gate.go.set()
    assert rt.result(run_id, timeout=TIMEOUT).output == "done hi"
    rt.session("k", "keeper").run("one").get(timeout=TIMEOUT)
    kept = rt.session("k").run("two")  # run by "keeper", a durable run: its start is kept
    assert kept.get(timeout=TIMEOUT).output == "keeper: two"
    submitted = rt.session("k").submit("three")
    assert rt.result(submitted, timeout=TIMEOUT).output == "keeper: three"


def test_a_durable_run_named_by_its_session_is_sent_again_after_a_crash(
    runtime: Start,
) -> None:
    """Its session names the run's durable agent; the runtime keeps its start as it does a
    named durable run's, so a crash before its first journal entry runs it again."""
    gate = Gate()
    rt = runtime(agents={"default": echo_agent})
    rt.register_agent("keeper", gate.agent, durable=True)
    gate.go.set()
    assert rt.session("k", "keeper").run("one").get(timeout=TIMEOUT).output == "done one"
    gate.go.clear()
    gate.entered.clear()
    handle = rt.session("k")
    future = handle.run("two")
    assert gate.entered.wait(TIMEOUT)  # in its first model call: nothing journaled yet
    handle.crash_for_testing()
    gate.go.set()
    assert future.get(timeout=TIMEOUT).output == "done two"
    assert rt.statistics().crashes == 1


def test_no_agent_named_while_none_is_registered(runtime: Start) -> None:
    rt = runtime()
    assert _code(lambda: rt.session("s")) == "RUNTIME_UNKNOWN_AGENT"


def test_session_keeps_its_agent_on_the_runtimes_own_loop() -> None:
    async def main() -> None:
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", _named("default"))
            rt.register_agent("other", _named("other"))
            assert (await rt.session("s").arun("a")).output == "default: a"
            await rt.session("s", "other").arun("hi")
            assert (await rt.session("s").arun("b")).output == "other: b"
            assert rt.session("s").agent == "other"
            assert await rt.session("s").apassivate()
            assert rt.session("s").agent == "other"
            assert (await rt.session("s").arun("c")).output == "other: c"

    asyncio.run(main())


# -- the registered agents -----------------------------------------------------------------------


def test_agents_lists_the_registered_agents(runtime: Start) -> None:
    rt = runtime(agents={"default": echo_agent})
    rt.register_agent("b", echo_agent, per_session=True)
    rt.register_agent("a", echo_agent, durable=True)
    agents = rt.agents()
    assert list(agents) == ["a", "b", "default"]
    assert agents["a"] == RegisteredAgent("a", echo_agent, per_session=False, durable=True)
    assert agents["b"] == RegisteredAgent("b", echo_agent, per_session=True, durable=False)
    agents.pop("a")  # a copy: the runtime's registrations are unchanged
    assert list(rt.agents()) == ["a", "b", "default"]
    rt.register_agent("a", echo_agent)  # replaced: no longer durable
    assert not rt.agents()["a"].durable


def test_the_protocol_apps_read_the_agents_through_the_public_listing(runtime: Start) -> None:
    from praxo_actors.protocols._agents import agent_names, with_tools
    from praxo_actors.protocols._registered import agent_tools, registered_agents

    rt = runtime(agents={"default": echo_agent})
    rt.register_agent("durable", echo_agent, durable=True)
    assert registered_agents(rt) == agent_names(rt) == ["default", "durable"]
    assert agent_tools(rt, "default") == ()
    assert _code(lambda: agent_tools(rt, "nobody")) == "RUNTIME_UNKNOWN_AGENT"
    from praxo_actors.agent import Tool

    derived = with_tools(rt, "durable", [Tool("ping", "", {}, lambda _a: "pong")], "k")
    assert rt.agents()[derived].durable
    assert [t.name for t in agent_tools(rt, derived)] == ["ping"]
    assert registered_agents(rt) == ["default", "durable"]  # a derived agent is not listed
