"""Properties of every run, over generated scripts of model replies."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from praxo_actors.agent import (
    AgentError,
    Tool,
    ToolError,
    arun_agent,
    new_agent_options,
    run_agent,
)
from praxo_actors.middleware import call_limit, structured_output, tool_selection
from praxo_actors.models import (
    Event,
    ModelError,
    Request,
    Session,
    ToolCall,
    message_assistant,
    message_user,
    response,
)

TERMINAL = {"run.completed", "run.failed"}

call_st = st.builds(
    ToolCall,
    name=st.sampled_from(["echo", "fail", "ghost"]),
    arguments=st.dictionaries(st.sampled_from(["a", "b"]), st.integers() | st.text(max_size=5)),
    id=st.none() | st.text(min_size=1, max_size=3),
)
reply_st = st.one_of(
    st.builds(lambda t: response(message_assistant(t)), st.text(max_size=20)),
    st.builds(
        lambda cs: response(message_assistant("", cs)), st.lists(call_st, min_size=1, max_size=3)
    ),
    st.just(response(message_assistant('<tool_call name="echo">{"a": 1}'))),
    st.just(ModelError("DOWN", "scripted")),
)
TOOLS = [
    Tool("echo", "", {}, lambda a: a),
    Tool("fail", "", {}, lambda a: ToolError("NOPE", "scripted")),
]


def options_for(replies: list[Any], sink: Any, extra: dict[str, Any]) -> Any:
    def model(request: Request) -> Any:
        return replies[request.step - 1] if request.step <= len(replies) else replies[-1]

    return new_agent_options(model, tools=TOOLS, sink=sink, max_steps=4, **extra)


middleware_st = st.fixed_dictionaries(
    {},
    optional={
        "tool_selection": st.builds(tool_selection, st.lists(st.sampled_from(["echo", "fail"]))),
        "call_limit": st.builds(call_limit, st.integers(-1, 3), st.integers(-1, 3)),
        "structured_output": st.just(structured_output({"type": "object"}, 0)),
        "pii": st.booleans(),
    },
)


def check_run(events: list[Event], start: Session, outcome: Any) -> None:
    assert [e.seq for e in events] == list(range(len(events)))
    assert events[0].type == "run.started"
    assert [e.type for e in events if e.type in TERMINAL] == [events[-1].type]
    assert len({e.run_id for e in events}) == 1
    started = sum(e.type == "tool.started" for e in events)
    completed = sum(e.type == "tool.completed" for e in events)
    if isinstance(outcome, AgentError):
        assert events[-1].type == "run.failed"
        assert events[-1].data["code"] == outcome.code
        assert outcome.run_id == events[0].run_id
        assert completed == started
    else:
        assert events[-1].type == "run.completed"
        assert events[-1].data["tool_calls"] == outcome.tool_calls == started == completed
        assert outcome.model_calls == outcome.steps
        assert outcome.session.messages[: len(start.messages) + 1] == [
            *start.messages,
            message_user("go"),
        ]


START = Session(id="s", messages=[message_user("before")], metadata={"m": [1]})


@settings(max_examples=150, deadline=None)
@given(replies=st.lists(reply_st, min_size=1, max_size=5), extra=middleware_st)
def test_every_run_ends_with_exactly_one_terminal_event(
    replies: list[Any], extra: dict[str, Any]
) -> None:
    """Seqs are contiguous, exactly one terminal event is last, and the inputs are unchanged."""
    events: list[Event] = []
    before = msgspec.json.encode(START)
    options = options_for(replies, events.append, extra)
    try:
        outcome: Any = run_agent(options, START, "go")
    except AgentError as exc:
        outcome = exc
    check_run(events, START, outcome)
    assert msgspec.json.encode(START) == before


@settings(max_examples=40, deadline=None)
@given(replies=st.lists(reply_st, min_size=1, max_size=5), extra=middleware_st)
def test_sync_and_async_drivers_agree(replies: list[Any], extra: dict[str, Any]) -> None:
    """run_agent and arun_agent give the same result, error and events for the same script."""

    def outcome_of(run: Any) -> tuple[Any, list[Event]]:
        events: list[Event] = []
        try:
            result: Any = run(options_for(replies, events.append, extra))
        except AgentError as exc:
            result = (exc.code, exc.message, exc.run_id)
        return result, [msgspec.structs.replace(e, time_ns=0) for e in events]

    sync = outcome_of(lambda o: run_agent(o, START, "go", run_id="r"))
    async_ = outcome_of(lambda o: asyncio.run(arun_agent(o, START, "go", run_id="r")))
    assert sync == async_


@pytest.mark.parametrize("where", ["model", "tool", "repairer"])
def test_base_exceptions_are_not_caught(where: str) -> None:
    """A BaseException from a callback propagates as is, with no run.failed event."""
    events: list[Event] = []

    class Stop(BaseException):
        pass

    def explode(*args: Any) -> Any:
        raise Stop

    replies = {
        "model": explode,
        "tool": lambda r: (
            response(message_assistant("", [ToolCall("x", {})]))
            if r.step == 1
            else response(message_assistant("{}"))
        ),
        "repairer": lambda r: response(message_assistant("no json")),
    }
    options = new_agent_options(
        replies[where],
        tools=[Tool("x", "", {}, explode if where == "tool" else (lambda a: 1))],
        structured_output=structured_output({}, 1, explode),
        sink=events.append,
    )
    with pytest.raises(Stop):
        run_agent(options, Session(id="s"), "go")
    assert "run.failed" not in [e.type for e in events]
