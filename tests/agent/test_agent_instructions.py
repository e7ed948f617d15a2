"""Instructions: a system message first in every model request, never in the session."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _helpers import Events, say

from praxo_actors.agent import ListJournal, Tool, arun_agent, new_agent_options, run_agent
from praxo_actors.models import (
    Message,
    Request,
    Response,
    Session,
    ToolCall,
    message_system,
    message_user,
    session,
)


def two_steps(seen: list[Request]) -> Any:
    """A model that records its requests, calls a tool once, then answers."""

    def model(request: Request) -> Response:
        seen.append(request)
        if request.step == 1:
            return say("", ToolCall("t", {}, id="c1"))
        return say("done")

    return model


TOOL = Tool("t", "", {}, lambda args: "ok")


def answer(request: Request) -> Response:
    """A model that answers at once."""
    return say("ok")


def test_instructions_come_first_in_every_request_and_never_into_the_session() -> None:
    """Both requests start with the instructions; the returned session does not hold them."""
    seen: list[Request] = []
    options = new_agent_options(two_steps(seen), tools=[TOOL], instructions="Be brief.")
    start = Session("s", [message_user("earlier")])
    result = run_agent(options, start, "now")
    assert [r.messages[0] for r in seen] == [message_system("Be brief.")] * 2
    assert seen[0].messages[1:] == [message_user("earlier"), message_user("now")]
    assert message_system("Be brief.") not in result.session.messages
    assert result.session.messages[:2] == [message_user("earlier"), message_user("now")]
    assert start.messages == [message_user("earlier")]


def test_a_callable_gets_the_session_the_run_starts_from_once_per_run() -> None:
    """``instructions(session)`` is called once per run; its text is the system message."""
    asked: list[Session] = []

    def instructions(current: Session) -> str:
        asked.append(current)
        return f"Speak to {current.metadata['user']}."

    seen: list[Request] = []
    options = new_agent_options(two_steps(seen), tools=[TOOL], instructions=instructions)
    start = Session("s", metadata={"user": "Ada"})
    run_agent(options, start, "hi")
    assert asked == [start]
    assert [r.messages[0].content for r in seen] == ["Speak to Ada."] * 2


def test_empty_instructions_send_no_system_message(scripted: Any) -> None:
    """An empty text, given or returned, adds nothing to the request."""
    for instructions in ("", lambda current: ""):
        model = scripted(say("ok"))
        run_agent(new_agent_options(model, instructions=instructions), session("s"), "hi")
        assert model.requests[0].messages == [message_user("hi")]


def test_async_runs_send_instructions_too() -> None:
    """Under arun_agent the instructions lead every request as well."""
    seen: list[Request] = []
    script = two_steps(seen)

    async def model(request: Request) -> Response:
        return script(request)

    options = new_agent_options(model, tools=[TOOL], instructions=lambda s: f"Session {s.id}.")
    result = asyncio.run(arun_agent(options, session("s7"), "hi"))
    assert [r.messages[0] for r in seen] == [message_system("Session s7.")] * 2
    assert all(m.role != "system" for m in result.session.messages)


def test_a_journaled_run_replays_with_the_same_instructions() -> None:
    """Instructions are not an effect: a journaled run replays in step with them."""
    seen: list[Request] = []
    options = new_agent_options(two_steps(seen), tools=[TOOL], instructions="Be brief.")
    journal = ListJournal()
    first = run_agent(options, session("s"), "x", run_id="r1", journal=journal)
    again = run_agent(options, session("s"), "x", run_id="r1", journal=journal)
    assert first.output == again.output == "done" and len(seen) == 2


def test_pii_redaction_covers_the_instructions(scripted: Any) -> None:
    """With ``pii=True`` the instructions are redacted like every message sent."""
    model = scripted(say("ok"))
    options = new_agent_options(model, pii=True, instructions="Write to ada@example.com.")
    run_agent(options, session("s"), "hi")
    assert model.requests[0].messages[0] == message_system("Write to [REDACTED_EMAIL].")


def test_an_instructions_callable_that_raises_fails_the_run(events: Events) -> None:
    """Its exception ends the run after ``run.failed`` (AGENT_CALLBACK_EXCEPTION), unchanged."""
    boom = KeyError("user")

    def instructions(current: Session) -> str:
        raise boom

    options = new_agent_options(answer, instructions=instructions, sink=events)
    with pytest.raises(KeyError) as raised:
        run_agent(options, session("s"), "hi")
    assert raised.value is boom
    assert events.types() == ["run.started", "run.failed"]
    assert events[-1].data["code"] == "AGENT_CALLBACK_EXCEPTION"


@pytest.mark.parametrize("returned", [None, 3, Message(role="system", content="x")])
def test_instructions_that_give_no_str_fail_with_type_error(returned: Any) -> None:
    """A callable returning anything but a str is a TypeError."""
    options = new_agent_options(answer, instructions=lambda current: returned)
    with pytest.raises(TypeError, match="instructions must give a str"):
        run_agent(options, session("s"), "hi")


def test_an_async_instructions_function_is_refused() -> None:
    """An ``async def`` is a TypeError (its coroutine is closed, so nothing is left behind)."""

    async def instructions(current: Session) -> str:
        return "never"

    options = new_agent_options(answer, instructions=instructions)
    with pytest.raises(TypeError, match="called synchronously"):
        run_agent(options, session("s"), "hi")


def test_instructions_of_the_wrong_type_are_refused_up_front() -> None:
    """Options refuse instructions that are neither a str, a callable nor None."""
    with pytest.raises(TypeError, match="instructions must be"):
        new_agent_options(answer, instructions=3)  # type: ignore[arg-type]
