"""Introspection: runtime.inspect(id) and runtime.sessions(...)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, echo_agent

from praxo_actors import PraxoError
from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.models import ToolCall
from praxo_actors.runtime import Runtime, SessionInfo
from praxo_actors.testing import ManualClock, ScriptedModel

Start = Callable[..., Runtime]


def test_inspect_follows_a_session_through_its_states(runtime: Start) -> None:
    gate, entered = threading.Event(), threading.Event()

    def hold(_args: dict[str, Any]) -> str:
        entered.set()
        gate.wait(TIMEOUT)
        return "held"

    def agent() -> Any:
        model = ScriptedModel([ToolCall("hold", {}), "done", "again"])
        return new_agent_options(model, tools=[Tool("hold", "", {}, hold)])

    rt = runtime(agents={"worker": agent})
    assert rt.inspect("s") == SessionInfo("s", "unknown")
    handle = rt.session("s", agent="worker")
    first = handle.run("one")
    second = handle.run("two")
    assert entered.wait(TIMEOUT)
    busy = rt.inspect("s")
    assert busy.state == "live" and busy.agent == "worker"
    assert busy.running_run_id == first.run_id and busy.queued_runs == 1
    assert busy.messages == 0 and busy.last_active_s is not None and busy.last_active_s >= 0
    gate.set()
    first.get(timeout=TIMEOUT)
    second.get(timeout=TIMEOUT)
    idle = rt.inspect("s")
    assert (idle.state, idle.running_run_id, idle.queued_runs) == ("live", None, 0)
    assert idle.messages == len(handle.history())
    assert handle.passivate()
    gone = rt.inspect("s")
    assert (gone.state, gone.messages, gone.last_active_s) == ("passivated", idle.messages, None)


def test_inspect_reads_idle_time_on_the_runtime_clock(runtime: Start) -> None:
    """``last_active_s`` is the runtime clock's time since the session's last run ended."""
    clock = ManualClock(100.0)
    rt = runtime(agents={"default": echo_agent}, clock=clock)
    rt.session("s").run("hi").get(timeout=TIMEOUT)
    clock.advance(42)
    assert rt.inspect("s").last_active_s == 42.0


def test_sessions_lists_live_then_passivated(runtime: Start) -> None:
    rt = runtime(agents={"default": echo_agent})
    for i in range(5):
        rt.session(f"s{i}").run("hi").get(timeout=TIMEOUT)
    for i in (1, 3):
        assert rt.session(f"s{i}").passivate()
    every = rt.sessions()
    assert [(i.id, i.state) for i in every] == [
        ("s0", "live"),
        ("s2", "live"),
        ("s4", "live"),
        ("s1", "passivated"),
        ("s3", "passivated"),
    ]
    assert all(i.messages == 2 for i in every)
    assert [i.id for i in rt.sessions(state="passivated")] == ["s1", "s3"]
    assert len(rt.sessions(limit=2)) == 2
    assert rt.sessions(state="activating") == []
    with pytest.raises(PraxoError) as bad:
        rt.sessions(state="asleep")
    assert bad.value.code == "RUNTIME_INVALID_INPUT"
    with pytest.raises(PraxoError):
        rt.inspect("")


def test_the_async_forms_work_on_the_runtimes_own_loop() -> None:
    async def main() -> list[str]:
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", echo_agent)
            await rt.session("a").arun("x")
            with pytest.raises(PraxoError) as blocked:
                rt.inspect("a")
            assert blocked.value.code == "RUNTIME_BLOCKING_CALL"
            info = await rt.ainspect("a")
            assert info.state == "live" and info.messages == 2
            return [i.id for i in await rt.asessions()]

    assert asyncio.run(main()) == ["a"]


def test_introspection_of_a_stopped_runtime_is_runtime_stopped(runtime: Start) -> None:
    """After stop(), inspect and sessions fail with RUNTIME_STOPPED (the store is closed)."""
    rt = runtime(agents={"default": echo_agent})
    rt.session("s").run("hi").get(timeout=TIMEOUT)
    rt.stop()
    for call in (lambda: rt.inspect("s"), rt.sessions, lambda: asyncio.run(rt.asessions())):
        with pytest.raises(PraxoError) as info:
            call()
        assert info.value.code == "RUNTIME_STOPPED"
