"""compaction: the history is compacted before each model call and the session keeps it."""

from __future__ import annotations

from typing import Any

import pytest
from _helpers import say

from praxo_actors.agent import AgentError, Tool, new_agent_options, run_agent
from praxo_actors.middleware import Compaction, compaction
from praxo_actors.models import (
    Message,
    Session,
    ToolCall,
    message_assistant,
    message_system,
    message_user,
)

PREFIX = "Summary of earlier conversation:\n"


def long_history() -> Session:
    return Session(
        id="s",
        messages=[
            message_system("rules"),
            message_user("a" * 400),
            message_assistant("b" * 400),
            message_user("c" * 400),
            message_assistant("d" * 400),
        ],
    )


def test_default_is_no_compaction(scripted: Any) -> None:
    """Without compaction the model sees the whole history."""
    model = scripted(say("ok"))
    run_agent(new_agent_options(model), long_history(), "now")
    assert len(model.requests[0].messages) == 6


def test_compacts_before_model_call_and_session_keeps_it(scripted: Any, events: Any) -> None:
    """An over-budget history is compacted, reported and kept in the returned session."""
    model = scripted(say("ok"))
    options = new_agent_options(model, compaction=compaction(100, keep_last=2), sink=events)
    result = run_agent(options, long_history(), "now")
    sent = model.requests[0].messages
    assert [m.role for m in sent] == ["system", "system", "assistant", "user"]
    assert sent[0] == message_system("rules")
    assert isinstance(sent[1].content, str) and sent[1].content.startswith(PREFIX)
    assert "user: " + "a" * 200 in sent[1].content
    assert result.session.messages == [*sent, message_assistant("ok")]
    assert events.types()[:2] == ["run.started", "context.compacted"]
    assert events[1].data == {"step": 1, "removed": 3, "messages": 4}


def test_under_budget_is_untouched(scripted: Any, events: Any) -> None:
    """A history within the budget is not compacted and no event is emitted."""
    model = scripted(say("ok"))
    options = new_agent_options(model, compaction=compaction(100_000), sink=events)
    run_agent(options, long_history(), "now")
    assert len(model.requests[0].messages) == 6
    assert "context.compacted" not in events.types()


def test_summarizer_gets_the_middle(scripted: Any) -> None:
    """A summariser receives the dropped middle and its text becomes the summary."""
    got: list[list[Message]] = []

    def summarizer(messages: list[Message]) -> str:
        got.append(messages)
        return "they talked"

    model = scripted(say("ok"))
    options = new_agent_options(model, compaction=compaction(100, 2, summarizer))
    run_agent(options, long_history(), "now")
    assert [m.content[0] for m in got[0]] == ["a", "b", "c"]
    assert model.requests[0].messages[1] == message_system(PREFIX + "they talked")


@pytest.mark.parametrize("bad", ["", None, 3])
def test_invalid_summary_fails_the_run(scripted: Any, events: Any, bad: Any) -> None:
    """An empty or non-str summary fails the run with COMPACTION_SUMMARY_INVALID."""
    options = new_agent_options(
        scripted(say("ok")), compaction=compaction(100, 2, lambda m: bad), sink=events
    )
    with pytest.raises(AgentError) as info:
        run_agent(options, long_history(), "now")
    assert info.value.code == "COMPACTION_SUMMARY_INVALID"
    assert events[-1].data["code"] == "COMPACTION_SUMMARY_INVALID"


def test_summarizer_exception_propagates_after_run_failed(scripted: Any, events: Any) -> None:
    """A summariser exception emits run.failed with AGENT_CALLBACK_EXCEPTION and propagates."""

    def summarizer(messages: list[Message]) -> str:
        raise MemoryError("no")

    options = new_agent_options(
        scripted(say("ok")), compaction=compaction(100, 2, summarizer), sink=events
    )
    with pytest.raises(MemoryError):
        run_agent(options, long_history(), "now")
    assert events[-1].data["code"] == "AGENT_CALLBACK_EXCEPTION"


def test_compaction_runs_before_every_model_call(scripted: Any, events: Any) -> None:
    """Growth within a run triggers compaction again before a later step."""
    big = "x" * 400
    tool = Tool("t", "", {}, lambda a: big)
    model = scripted(
        say("", ToolCall("t", {}, id="1")), say("", ToolCall("t", {}, id="2")), say("ok")
    )
    options = new_agent_options(model, tools=[tool], compaction=compaction(150, 2), sink=events)
    result = run_agent(options, Session(id="s"), "go")
    assert events.types().count("context.compacted") >= 1
    last_sent = model.requests[-1].messages
    assert last_sent[-1].role == "tool" and last_sent[-2].role == "assistant"
    assert result.session.messages[-1] == message_assistant("ok")


def test_tool_result_keeps_its_call(scripted: Any) -> None:
    """The kept tail never starts with a tool message that lost its call."""
    history = Session(
        id="s",
        messages=[
            message_user("q" * 400),
            message_assistant("", [ToolCall("t", {}, id="1")]),
            Message(role="tool", content="r" * 400, tool_call_id="1", name="t"),
        ],
    )
    model = scripted(say("ok"))
    run_agent(new_agent_options(model, compaction=compaction(50, 2)), history, "next")
    roles = [m.role for m in model.requests[0].messages]
    assert roles == ["system", "assistant", "tool", "user"]


def test_settings_are_validated() -> None:
    """Negative or non-int counts and a non-callable summariser are refused."""
    with pytest.raises(ValueError):
        compaction(-1)
    with pytest.raises(ValueError):
        compaction(10, keep_last=-1)
    with pytest.raises(TypeError):
        compaction(10.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        compaction(10, 2, "summary")  # type: ignore[arg-type]
    assert compaction(10) == Compaction(10, 6, None)


def test_removed_count_ignores_a_summarizer_that_mutates_its_argument() -> None:
    """A summariser that empties the list it is given does not change the removed count."""

    def greedy(middle: list[Message]) -> str:
        n = len(middle)
        middle.clear()
        return f"{n} messages"

    events: list[Any] = []
    options = new_agent_options(
        lambda _req: say("ok"),
        compaction=compaction(max_tokens=50, keep_last=1, summarizer=greedy),
        sink=events.append,
    )
    result = run_agent(options, long_history(), "next")
    compacted = [e for e in events if e.type == "context.compacted"]
    assert compacted and compacted[0].data["removed"] == 4
    assert result.session.messages[1].content == PREFIX + "4 messages"
