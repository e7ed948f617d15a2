"""The scripted, function and echo models reply as documented and record every request."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from praxo_actors.models import (
    ImageBlock,
    Message,
    ModelError,
    Request,
    Response,
    TextBlock,
    ToolCall,
    message_assistant,
    message_system,
    message_user,
)
from praxo_actors.testing import (
    EchoModel,
    FunctionModel,
    ScriptedModel,
    ScriptExhaustedError,
    to_reply,
)


def request(*messages: Message, step: int = 0) -> Request:
    return Request(
        messages=list(messages) or [message_user("hi")],
        tools=[],
        run_id="run-1",
        session_id="s1",
        step=step,
    )


CALL = ToolCall("echo", {"text": "hi"}, id="c1")


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("hello", Response(message_assistant("hello"))),
        (CALL, Response(message_assistant("", [CALL]))),
        ([CALL, CALL], Response(message_assistant("", [CALL, CALL]))),
        ((CALL,), Response(message_assistant("", [CALL]))),
        (message_assistant("m"), Response(message_assistant("m"))),
        (ModelError("RATE_LIMITED", "slow down"), ModelError("RATE_LIMITED", "slow down")),
        (Response(message_assistant("r"), usage={"tokens": 3}), None),
    ],
)
def test_to_reply_converts_each_kind_of_script_item(item: Any, expected: Any) -> None:
    """Text, tool calls and messages become responses; replies pass through as they are."""
    assert to_reply(item) == (item if expected is None else expected)


@pytest.mark.parametrize("item", [3, None, [], ["text"], [CALL, "x"], {"text": "x"}])
def test_to_reply_refuses_anything_else(item: Any) -> None:
    """Items of no accepted kind raise TypeError."""
    with pytest.raises(TypeError, match="not a script item"):
        to_reply(item)


def test_scripted_model_replays_in_order_and_records_requests() -> None:
    """Each call returns the next scripted reply and appends its request."""
    model = ScriptedModel(["one", CALL, ModelError("DOWN")])
    requests = [request(step=n) for n in range(3)]
    replies = [model(r) for r in requests]
    assert replies == [
        Response(message_assistant("one")),
        Response(message_assistant("", [CALL])),
        ModelError("DOWN"),
    ]
    assert model.requests == requests
    assert model.remaining == 0


def test_scripted_model_checks_its_script_when_built() -> None:
    """A bad item fails construction, not the call that would reach it."""
    with pytest.raises(TypeError):
        ScriptedModel(["fine", 42])  # type: ignore[list-item]


def test_scripted_model_raises_an_assertion_when_exhausted() -> None:
    """A call past the script raises ScriptExhaustedError, an AssertionError, naming the step."""
    model = ScriptedModel(["only"])
    model(request())
    with pytest.raises(AssertionError) as info:
        model(request(step=1))
    assert isinstance(info.value, ScriptExhaustedError)
    assert "all 1 were used" in str(info.value)
    assert "step 1" in str(info.value)
    assert len(model.requests) == 2


def test_scripted_model_acall_shares_the_script() -> None:
    """``acall`` is a coroutine function consuming the same script and records."""
    model = ScriptedModel(["a", "b"])
    assert asyncio.iscoroutinefunction(model.acall)
    first = model(request())
    second = asyncio.run(model.acall(request(step=1)))
    assert (first, second) == (Response(message_assistant("a")), Response(message_assistant("b")))
    assert [r.step for r in model.requests] == [0, 1]


def test_function_model_converts_what_the_function_returns() -> None:
    """The function's text or tool calls become a response; the request reaches it."""
    seen: list[Request] = []

    def fn(req: Request) -> Any:
        seen.append(req)
        return f"{len(req.messages)} messages" if req.step == 0 else [CALL]

    model = FunctionModel(fn)
    r0, r1 = request(message_system("s"), message_user("u")), request(step=1)
    assert model(r0) == Response(message_assistant("2 messages"))
    assert model(r1) == Response(message_assistant("", [CALL]))
    assert seen == model.requests == [r0, r1]


def test_function_model_refuses_other_returns() -> None:
    """A return of no script kind raises TypeError naming it."""
    model = FunctionModel(lambda req: {"not": "a response"})
    with pytest.raises(TypeError, match="not a script item"):
        model(request())


def test_function_model_awaits_an_async_function_through_acall() -> None:
    """``acall`` awaits an ``async def`` function and converts its return."""

    async def fn(req: Request) -> str:
        await asyncio.sleep(0)
        return f"step {req.step}"

    model = FunctionModel(fn)
    assert asyncio.run(model.acall(request(step=4))) == Response(message_assistant("step 4"))
    assert len(model.requests) == 1


def test_function_model_refuses_an_async_function_on_the_sync_path() -> None:
    """Calling an async-function model synchronously raises TypeError and warns of nothing."""

    async def fn(req: Request) -> str:
        return "never"

    model = FunctionModel(fn)
    with pytest.raises(TypeError, match="acall"):
        model(request())


def test_echo_model_answers_with_the_last_user_text() -> None:
    """Echo returns the latest user message's text, skipping later messages of other roles."""
    model = EchoModel()
    reply = model(request(message_user("first"), message_user("second"), message_assistant("x")))
    assert reply == Response(message_assistant("second"))


def test_echo_model_joins_text_blocks_and_handles_no_user() -> None:
    """Text blocks are joined, image blocks skipped; no user message gives empty text."""
    model = EchoModel()
    blocks = Message(
        role="user", content=[TextBlock("a"), ImageBlock("http://x/i.png"), TextBlock("b")]
    )
    assert model(request(blocks)) == Response(message_assistant("ab"))
    assert model(request(message_system("only system"))) == Response(message_assistant(""))
    assert asyncio.run(model.acall(request(message_user("async")))) == Response(
        message_assistant("async")
    )
    assert len(model.requests) == 3
