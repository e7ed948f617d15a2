"""The first model call's request takes the run's message list; the run makes its own after."""

from __future__ import annotations

import gc
from typing import Any

from praxo_actors.agent import BeginStep, CallModel, new_agent_options, start_run
from praxo_actors.models import Message, Response, Session, message_assistant, message_user


def unused_model(request: Any) -> Response:
    raise AssertionError("the test answers model calls itself")


def _waiting_on_model(instructions: str | None = None) -> tuple[Any, CallModel, Message]:
    history = [message_user("hi"), message_assistant("hello")]
    options = new_agent_options(unused_model, instructions=instructions)
    user = message_user("again")
    run = start_run(options, Session("s", history), user)
    assert isinstance(run.effect, BeginStep)
    effect = run.send(None)
    assert isinstance(effect, CallModel)
    return run, effect, user


def _lists_holding(message: Message) -> int:
    gc.collect()
    return sum(1 for o in gc.get_referrers(message) if type(o) is list)


def test_a_run_waiting_on_its_first_model_call_holds_one_list_of_its_messages() -> None:
    """The request's messages are the only list of them while the model runs (not a copy too)."""
    run, effect, user = _waiting_on_model()
    assert [m.content for m in effect.request.messages] == ["hi", "hello", "again"]
    assert _lists_holding(user) == 1
    run.close()


def test_a_model_that_changes_its_request_changes_nothing_the_run_keeps() -> None:
    """The run's messages after the call are the session's and the input, as they were sent."""
    run, effect, _user = _waiting_on_model()
    effect.request.messages.clear()
    effect.request.messages.append(message_user("injected"))
    assert run.send(Response(message_assistant("done"))) is None
    contents = [m.content for m in run.result.session.messages]
    assert contents == ["hi", "hello", "again", "done"]


def test_with_instructions_the_request_is_one_new_list_and_the_run_keeps_its_own() -> None:
    """With a system message the request holds a list of its own; the run's stays as it was."""
    run, effect, user = _waiting_on_model("be brief")
    assert [m.role for m in effect.request.messages] == ["system", "user", "assistant", "user"]
    assert _lists_holding(user) == 1
    effect.request.messages.pop()
    assert run.send(Response(message_assistant("done"))) is None
    assert [m.content for m in run.result.session.messages] == ["hi", "hello", "again", "done"]
