"""A durable run that ended for good (a session stop, its deadline, its own error) after it wrote
journal entries leaves no pending run in the store: a later ``resume=True`` runtime does not
run it again."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, error_code

from praxo_actors import PraxoError
from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.memory import SQLiteStore
from praxo_actors.memory._log import JOURNAL, PENDING
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.testing import ManualClock

Start = Callable[..., Runtime]


class Tooled:
    """A model that calls tool ``t`` first (a journal entry each), then ends as ``then`` says:
    ``hold`` waits to be cut off, ``fail`` raises, ``answer`` answers."""

    def __init__(self, then: str) -> None:
        self.then = then
        self.entered = threading.Event()
        self.inputs: list[Any] = []
        self.tools = 0

    async def model(self, request: Request) -> Response:
        if request.step == 1:
            self.inputs.append(request.messages[-1].content)
            return Response(message_assistant("", [ToolCall("t", {}, id="c1")]))
        if self.then == "hold":
            self.entered.set()
            await asyncio.sleep(TIMEOUT * 3)  # cut off here
        if self.then == "fail":
            raise ValueError("the model broke")
        return Response(message_assistant("done"))

    def tool(self, args: dict[str, Any]) -> str:
        self.tools += 1
        return "ok"

    def agent(self) -> AgentOptions:
        return new_agent_options(self.model, tools=[Tool("t", "", {}, self.tool)])


def _stored(path: Path) -> tuple[list[Any], list[Any]]:
    store = SQLiteStore(path)
    try:
        return [i.value for i in store.search(PENDING)], [i.value for i in store.search(JOURNAL)]
    finally:
        store.close()


@pytest.mark.parametrize("end", ["stop", "deadline", "fail"])
def test_a_durable_run_ended_after_its_journal_is_not_run_again(
    runtime: Start, tmp_path: Path, end: str
) -> None:
    path = tmp_path / "s.sqlite3"
    first = Tooled("fail" if end == "fail" else "hold")
    clock = ManualClock()
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT, clock=clock)
    try:
        rt.register_agent("default", first.agent, durable=True)
        handle = rt.session("s")
        future = handle.run("go", deadline=60)
        if end == "stop":
            assert first.entered.wait(TIMEOUT)
            assert handle.stop(timeout=TIMEOUT)
        elif end == "deadline":
            assert first.entered.wait(TIMEOUT)
            clock.advance(60)
        if end == "fail":
            with pytest.raises(ValueError):
                future.get(timeout=TIMEOUT)
        else:
            codes = {"stop": "AGENT_CANCELLED", "deadline": "AGENT_DEADLINE"}
            assert error_code(future) == codes[end]
    finally:
        rt.stop()
    assert first.tools == 1
    assert _stored(path) == ([], [])  # the run's end dropped its pending entry and journal
    again = Tooled("answer")
    rt2 = runtime(store=path, resume=True)
    rt2.register_agent("default", again.agent, durable=True)
    assert rt2.session("s").run("later").get(timeout=TIMEOUT).output == "done"
    assert again.inputs == ["later"]  # "go" was not resumed
    assert again.tools == 1


def test_a_durable_run_failed_after_its_crash_retries_is_not_run_again(tmp_path: Path) -> None:
    """Cut off by more crashes than it is retried, a durable run fails SESSION_CRASHED and
    leaves no pending run in the store: a later runtime does not resume it."""
    path = tmp_path / "s.sqlite3"
    first = Tooled("hold")
    entered = threading.Semaphore(0)
    model = first.model

    async def counted(request: Request) -> Response:
        if request.step > 1:
            entered.release()
        return await model(request)

    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        agent = lambda: new_agent_options(counted, tools=[Tool("t", "", {}, first.tool)])  # noqa: E731
        rt.register_agent("default", agent, durable=True)
        handle = rt.session("s")
        future = handle.run("go")
        for _ in range(4):  # the first cut, and each of the three retries
            assert entered.acquire(timeout=TIMEOUT)
            handle.crash_for_testing()
        assert error_code(future) == "SESSION_CRASHED"
    finally:
        rt.stop()
    assert first.tools == 1
    assert _stored(path) == ([], [])


def test_a_resumed_durable_run_a_session_stop_ends_is_not_resumed_again(tmp_path: Path) -> None:
    """Cut off by a runtime stop, resumed by the next runtime (its tool replayed), then ended
    by handle.stop(): it fails AGENT_CANCELLED and the third runtime does not resume it."""
    path = tmp_path / "s.sqlite3"
    first = Tooled("hold")
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        rt.register_agent("default", first.agent, durable=True)
        future = rt.session("s").run("go")
        assert first.entered.wait(TIMEOUT)
    finally:
        rt.stop()
    assert error_code(future) == "RUNTIME_STOPPED"
    second = Tooled("hold")
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT, resume=True)
    try:
        rt.register_agent("default", second.agent, durable=True)
        assert second.entered.wait(TIMEOUT)  # resumed: the tool replayed, the model live
        assert second.tools == 0
        handle = rt.session("s")
        assert handle.stop(timeout=TIMEOUT)
        with pytest.raises(PraxoError) as info:
            handle.result(future.run_id, timeout=TIMEOUT)
        assert info.value.code == "AGENT_CANCELLED"
    finally:
        rt.stop()
    assert _stored(path) == ([], [])
    third = Tooled("answer")
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT, resume=True)
    try:
        rt.register_agent("default", third.agent, durable=True)
        assert rt.session("s").run("later").get(timeout=TIMEOUT).output == "done"
        assert third.inputs == ["later"]
    finally:
        rt.stop()
