"""Overlapping input: on_busy="interrupt" keeps the steps a run completed, "rollback" none."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, contents, error_code

from praxo_actors import PraxoError
from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime

Start = Callable[..., Runtime]


class Slow:
    def __init__(self) -> None:
        self.gate, self.entered = threading.Event(), threading.Event()

    def model(self, request: Request) -> Response:
        last = request.messages[-1]
        if last.role == "user" and last.content == "look it up":
            return Response(message_assistant("", [ToolCall("search", {}, id="c1")]))
        return Response(message_assistant(f"answer to {last.content}"))

    def search(self, _args: dict[str, Any]) -> str:
        self.entered.set()
        assert self.gate.wait(TIMEOUT)
        return "found"

    def agent(self) -> AgentOptions:
        return new_agent_options(self.model, tools=[Tool("search", "", {}, self.search)])


def _overlap(rt: Runtime, slow: Slow) -> tuple[Any, Any]:
    handle = rt.session("s")
    first = handle.run("look it up")
    assert slow.entered.wait(TIMEOUT)
    second = handle.run("never mind")
    rt.inspect("s")  # the cancellation reached the session before the tool returns
    slow.gate.set()
    return first, second


def test_interrupt_keeps_what_the_running_run_completed(runtime: Start) -> None:
    slow = Slow()
    rt = runtime(on_busy="interrupt")
    rt.register_agent("default", slow.agent)
    first, second = _overlap(rt, slow)
    assert error_code(first) == "AGENT_CANCELLED"
    assert second.get(timeout=TIMEOUT).output == "answer to never mind"
    history = rt.session("s").history()
    assert [m.role for m in history] == ["user", "assistant", "tool", "user", "assistant"]
    assert contents(history)[2] == '"found"'
    assert rt.session("s").passivate()
    assert [m.role for m in rt.session("s").history()] == [m.role for m in history]


def test_rollback_keeps_nothing_of_it(runtime: Start) -> None:
    slow = Slow()
    rt = runtime(on_busy="rollback")
    rt.register_agent("default", slow.agent)
    first, second = _overlap(rt, slow)
    assert error_code(first) == "AGENT_CANCELLED"
    assert second.get(timeout=TIMEOUT).output == "answer to never mind"
    assert contents(rt.session("s").history()) == ["never mind", "answer to never mind"]


def test_an_unknown_on_busy_is_refused() -> None:
    with pytest.raises(PraxoError) as info:
        Runtime.start(on_busy="ignore")  # type: ignore[arg-type]
    assert info.value.code == "RUNTIME_INVALID_CONFIG"
