"""Per-session scripted and function models: each session of a runtime gets a model of its own."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request, message_user
from praxo_actors.runtime import Runtime
from praxo_actors.testing import (
    FunctionModel,
    PerSessionModel,
    ScriptedModel,
    ScriptExhaustedError,
)

TIMEOUT = 10.0


def request(session_id: str) -> Request:
    return Request([message_user("hi")], [], run_id="r", session_id=session_id, step=0)


def outputs(model: Any, sessions: list[str]) -> dict[str, list[str]]:
    """Run each session twice, one after the other, on a runtime whose agent uses ``model``."""
    got: dict[str, list[str]] = {s: [] for s in sessions}
    with Runtime.start(idle_timeout=None, timeout=TIMEOUT) as runtime:
        runtime.register_agent("default", lambda: new_agent_options(model))
        for _ in range(2):
            for session_id in sessions:
                result = runtime.session(session_id).run("go").get(timeout=TIMEOUT)
                got[session_id].append(result.output)
    return got


def test_each_session_of_a_runtime_replays_its_own_script() -> None:
    """With ``ScriptedModel.per_session`` two sessions each get the whole script, in order."""
    model = ScriptedModel.per_session(["first", "second"])
    assert outputs(model, ["s1", "s2"]) == {"s1": ["first", "second"], "s2": ["first", "second"]}
    assert model.sessions == ["s1", "s2"]
    assert model.model("s1").remaining == 0 and model.model("s2").remaining == 0
    assert [r.session_id for r in model.requests] == ["s1", "s2", "s1", "s2"]
    assert [r.session_id for r in model.model("s2").requests] == ["s2", "s2"]


def test_one_scripted_model_is_one_script_shared_by_every_session() -> None:
    """The plain form, as documented: the sessions take the replies of one script in turn."""
    model = ScriptedModel(["first", "second", "third", "fourth"])
    assert outputs(model, ["s1", "s2"]) == {"s1": ["first", "third"], "s2": ["second", "fourth"]}


def test_a_per_session_script_runs_out_per_session() -> None:
    """A session past the end of its script fails; another session still has its script."""
    model = ScriptedModel.per_session(["only"])
    with Runtime.start(idle_timeout=None, timeout=TIMEOUT) as runtime:
        runtime.register_agent("default", lambda: new_agent_options(model))
        assert runtime.session("s1").run("go").get(timeout=TIMEOUT).output == "only"
        with pytest.raises(ScriptExhaustedError):
            runtime.session("s1").run("again").get(timeout=TIMEOUT)
        assert runtime.session("s2").run("go").get(timeout=TIMEOUT).output == "only"


def test_a_per_session_script_is_checked_when_built() -> None:
    with pytest.raises(TypeError, match="not a script item"):
        ScriptedModel.per_session(["ok", 42])  # type: ignore[list-item]


def test_a_per_session_function_keeps_state_per_session() -> None:
    """``FunctionModel.per_session(make)`` calls ``make(session_id)`` once per session."""
    made: list[str] = []

    def make(session_id: str) -> Any:
        made.append(session_id)
        count = 0

        def answer(_request: Request) -> str:
            nonlocal count
            count += 1
            return f"{session_id} #{count}"

        return answer

    model = FunctionModel.per_session(make)
    assert outputs(model, ["a", "b"]) == {"a": ["a #1", "a #2"], "b": ["b #1", "b #2"]}
    assert made == ["a", "b"]
    assert isinstance(model.model("a"), FunctionModel)


def test_acall_dispatches_to_the_sessions_model() -> None:
    """``acall`` awaits an ``async`` per-session function and records the request."""

    def make(session_id: str) -> Any:
        async def answer(_request: Request) -> str:
            return f"async {session_id}"

        return answer

    model: PerSessionModel[FunctionModel] = FunctionModel.per_session(make)
    reply = asyncio.run(model.acall(request("x")))
    assert reply.message.content == "async x"  # type: ignore[union-attr]
    assert model.sessions == ["x"] and len(model.model("x").requests) == 1
    with pytest.raises(KeyError):
        model.model("y")
