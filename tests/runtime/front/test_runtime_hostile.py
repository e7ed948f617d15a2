"""Hostile inputs and callbacks against the runtime: each gets a code, nothing hangs or leaks."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, echo_agent, error_code

from praxo_actors import PraxoError
from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.models import Event, Message, Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.testing import ScriptedModel
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]


def test_a_lone_surrogate_input_is_refused_at_the_boundary(runtime: Start) -> None:
    """run("\\ud800") raises RUNTIME_INVALID_INPUT at once and leaves the session usable."""
    rt = runtime(agents={"default": echo_agent}, on_busy="reject", max_live_sessions=3)
    for i in range(3):
        with pytest.raises(PraxoError) as info:
            rt.session(f"s{i}").run("\ud800")
        assert info.value.code == "RUNTIME_INVALID_INPUT"
    for i in range(3):
        assert rt.session(f"s{i}").run("fine").get(timeout=TIMEOUT).output == "fine"
    with pytest.raises(PraxoError) as info:
        rt.session("\udfff")
    assert info.value.code == "RUNTIME_INVALID_INPUT"
    assert rt.statistics().runs_pending == 0


def test_stop_from_a_sync_tool_stops_everything(runtime: Start) -> None:
    """runtime.stop() called by a sync tool stops the runtime; its run fails RUNTIME_STOPPED."""
    holder: dict[str, Runtime] = {}
    stopped = threading.Event()

    def handler(args: dict[str, Any]) -> str:
        holder["rt"].stop()
        stopped.set()
        return "after stop"

    tool = Tool("halt", "stops the runtime", {"type": "object"}, handler)
    model = ScriptedModel([ToolCall("halt", {}), "never"])
    rt = holder["rt"] = runtime(agents={"default": lambda: new_agent_options(model, tools=[tool])})
    assert error_code(rt.session("s").run("x")) == "RUNTIME_STOPPED"
    assert stopped.wait(TIMEOUT)
    rt.stop()  # a second stop is a no-op
    assert error_code(rt.session("s").run("y")) == "RUNTIME_STOPPED"


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit])
def test_a_subscriber_raising_a_base_exception_is_removed(
    runtime: Start, error: type[BaseException]
) -> None:
    """A subscriber that raises KeyboardInterrupt or SystemExit is unsubscribed; others go on."""
    rt = runtime(agents={"default": echo_agent})
    calls = 0

    def bad(event: Event) -> None:
        nonlocal calls
        calls += 1
        raise error

    seen: list[str] = []
    sub = rt.events.subscribe(bad, pattern="run.completed")
    rt.events.subscribe(lambda e: seen.append(e.run_id), pattern="run.completed")
    first = rt.session("s").run("a").get(timeout=TIMEOUT)
    eventually(lambda: seen == [first.run_id] and not sub.active)
    second = rt.session("s").run("b").get(timeout=TIMEOUT)
    eventually(lambda: len(seen) == 2)
    assert calls == 1
    assert sub not in rt.events.subscriptions
    assert seen == [first.run_id, second.run_id]


def test_a_response_without_a_message_fails_its_run(runtime: Start) -> None:
    """A model returning Response(message=None) fails its run with a TypeError, uncommitted."""

    def model(request: Request) -> Response:
        return Response(message=None)  # type: ignore[arg-type]

    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    with pytest.raises(TypeError, match=r"Response\.message"):
        rt.session("s").run("x").get(timeout=TIMEOUT)
    assert rt.session("s").history() == []


def test_a_non_json_usage_fails_its_run_and_spares_the_session(runtime: Start) -> None:
    """A usage dict holding an object fails the run (TypeError) even with a subscriber."""

    def model(request: Request) -> Response:
        return Response(message_assistant("x"), usage={"tokens": object()})

    rt = runtime(agents={"default": lambda: new_agent_options(model), "echo": echo_agent})
    events: list[str] = []
    rt.events.subscribe(lambda e: events.append(e.type), pattern="*")
    with pytest.raises(TypeError, match="usage"):
        rt.session("s").run("x").get(timeout=TIMEOUT)
    assert rt.session("s", agent="echo").run("ok").get(timeout=TIMEOUT).output == "ok"
    eventually(lambda: events.count("run.completed") == 1)
    assert "run.failed" in events
    assert rt.statistics().crashes == 0
    assert [m.content for m in rt.session("s").history()] == ["ok", "ok"]
    assert all(isinstance(m, Message) for m in rt.session("s").history())


def test_a_malformed_message_fails_its_run_not_the_session(runtime: Start) -> None:
    """A Response whose Message has a bogus role fails that run; the session lives on."""

    def model(request: Request) -> Response:
        return Response(Message(role="bogus", content="x"))  # type: ignore[arg-type]

    rt = runtime(agents={"default": lambda: new_agent_options(model), "echo": echo_agent})
    with pytest.raises(TypeError, match="malformed"):
        rt.session("s").run("x").get(timeout=TIMEOUT)
    assert rt.session("s", agent="echo").run("ok").get(timeout=TIMEOUT).output == "ok"
    assert rt.statistics().crashes == 0
