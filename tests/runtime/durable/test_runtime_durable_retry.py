"""Durable runs and ``ToolRetry``: a retry is journaled as the call's result and replayed."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _runtime_helpers import TIMEOUT, contents

from praxo_actors.agent import AgentOptions, Tool, ToolRetry, new_agent_options, tool_context
from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._log import JOURNAL, PENDING
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime

Start = Callable[..., Runtime]


class Retrying:
    """A model that looks a city up until the tool takes it, then waits once, then answers.

    ``lookup`` refuses ``"Parigi"`` with a ``ToolRetry``; ``wait`` blocks on its first call
    when ``block`` is set, so that the run can be cut off after the retry was journaled.
    """

    def __init__(self, block: bool) -> None:
        self.lock = threading.Lock()
        self.block = block
        self.lookups: list[tuple[str, str]] = []  # (city, idempotency key)
        self.waits: list[int] = []  # attempt of each wait call
        self.model_steps: list[int] = []
        self.entered = threading.Event()

    def model(self, request: Request) -> Response:
        with self.lock:
            self.model_steps.append(request.step)
        if request.step == 1:
            return Response(message_assistant("", [ToolCall("lookup", {"city": "Parigi"}, "c1")]))
        if request.step == 2:
            calls = [ToolCall("lookup", {"city": "Paris"}, "c2"), ToolCall("wait", {}, "c3")]
            return Response(message_assistant("", calls))
        return Response(message_assistant(f"done: {request.messages[-1].content}"))

    def lookup(self, args: dict[str, Any]) -> str:
        context = tool_context()
        assert context is not None
        with self.lock:
            self.lookups.append((args["city"], context.idempotency_key))
        if args["city"] != "Paris":
            raise ToolRetry("give the English name")
        return "found Paris"

    async def wait(self, _args: dict[str, Any]) -> str:
        context = tool_context()
        assert context is not None
        with self.lock:
            self.waits.append(context.attempt)
            first = len(self.waits) == 1
        if first and self.block:
            self.entered.set()
            # Cut off here: the session crashes, or the runtime stops and cancels this task.
            await asyncio.sleep(TIMEOUT)
            return "late"
        return "waited"

    def agent(self) -> AgentOptions:
        tools = [Tool("lookup", "", {}, self.lookup), Tool("wait", "", {}, self.wait)]
        return new_agent_options(self.model, tools=tools, max_tool_retries=1)


def _plain_run(runtime: Start) -> tuple[str, list[Any]]:
    """The output and history of the same run by an agent that is not durable."""
    world = Retrying(block=False)
    rt = runtime()
    rt.register_agent("default", world.agent)
    result = rt.session("plain").run("go").get(timeout=TIMEOUT)
    return result.output, contents(result.session.messages)


def test_a_crash_after_a_retry_replays_it_without_calling_the_tool_again(
    runtime: Start,
) -> None:
    """Crashed after the retry was journaled, the resumed run answers the retried call from
    the journal (one ``Parigi`` lookup in all) and ends as the non-durable run does."""
    output, history = _plain_run(runtime)
    world = Retrying(block=True)
    store = InMemoryStore()
    rt = runtime(store=store)
    rt.register_agent("default", world.agent, durable=True)
    handle = rt.session("s")
    future = handle.run("go")
    assert world.entered.wait(TIMEOUT)
    handle.crash_for_testing()
    result = future.get(timeout=TIMEOUT)
    rid = future.run_id
    assert world.lookups == [("Parigi", f"{rid}:1:0"), ("Paris", f"{rid}:2:0")]
    assert world.waits == [1, 2]
    assert world.model_steps == [1, 2, 3]
    assert result.output == output == 'done: "waited"'
    assert contents(result.session.messages) == history
    assert contents(handle.history(timeout=TIMEOUT)) == history
    assert list(store.search(PENDING)) == [] and list(store.search(JOURNAL)) == []
    store.close()


def test_a_retry_journaled_before_a_restart_is_replayed_in_the_next_process(
    tmp_path: Path,
) -> None:
    """Stopped mid-run on SQLite, the run resumed by the next runtime replays the retry."""
    path = tmp_path / "s.sqlite3"
    world = Retrying(block=True)
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        rt.register_agent("default", world.agent, durable=True)
        future = rt.session("s").run("go")
        assert world.entered.wait(TIMEOUT)
    finally:
        rt.stop()
    again = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT, resume=True)
    try:
        again.register_agent("default", world.agent, durable=True)
        result = again.session("s").result(future.run_id, timeout=TIMEOUT)
    finally:
        again.stop()
    assert [city for city, _key in world.lookups] == ["Parigi", "Paris"]
    assert world.waits == [1, 2] and world.model_steps == [1, 2, 3]
    assert result.output == 'done: "waited"'
