"""The agent loop driven by run_agent: steps, tool calls, failures and the returned session."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _helpers import say

from praxo_actors import PraxoError
from praxo_actors.agent import AgentError, Tool, ToolError, new_agent_options, run_agent
from praxo_actors.models import (
    ImageBlock,
    Message,
    ModelError,
    Request,
    Response,
    Session,
    TextBlock,
    ToolCall,
    message_assistant,
    message_system,
    message_user,
    response,
    session,
)


def echo_tool(seen: list[dict[str, Any]] | None = None) -> Tool:
    def handler(arguments: dict[str, Any]) -> Any:
        if seen is not None:
            seen.append(arguments)
        return {"echo": arguments.get("text")}

    return Tool("echo", "Echo the text.", {"type": "object"}, handler)


def test_model_receives_messages_and_returns_output(scripted: Any) -> None:
    """A model that answers without tool calls completes the run with its text as output."""
    model = scripted(lambda r: say(f"received {len(r.messages)} messages"))
    result = run_agent(new_agent_options(model), session("s1"), "hello")
    assert result.output == "received 1 messages"
    assert result.steps == 1 and result.model_calls == 1 and result.tool_calls == 0
    assert result.structured is None
    request = model.requests[0]
    assert request.messages == [message_user("hello")]
    assert request.session_id == "s1" and request.run_id == result.run_id
    assert request.step == 1 and request.tools == []


def test_returned_session_holds_the_exchange_and_input_is_untouched(scripted: Any) -> None:
    """The run returns a new session holding the user and assistant messages; the input is kept."""
    start = Session(id="s", messages=[message_system("be brief")], metadata={"k": 1})
    result = run_agent(new_agent_options(scripted(say("hi"))), start, "hello")
    assert start.messages == [message_system("be brief")]
    assert result.session is not start
    assert result.session.id == "s" and result.session.metadata == {"k": 1}
    assert result.session.messages == [
        message_system("be brief"),
        message_user("hello"),
        message_assistant("hi"),
    ]
    result.session.metadata["k"] = 2
    assert start.metadata == {"k": 1}


def test_tools_are_advertised_in_registration_order(scripted: Any) -> None:
    """The request lists every registered tool, in registration order."""
    tools = [Tool(n, f"tool {n}", {"type": "object"}, lambda a: None) for n in ("b", "a", "c")]
    model = scripted(say("done"))
    run_agent(new_agent_options(model, tools=tools), session("s"), "x")
    assert [t.name for t in model.requests[0].tools] == ["b", "a", "c"]
    assert model.requests[0].tools[0].description == "tool b"


def test_tool_call_round_trip(scripted: Any) -> None:
    """A tool call runs the handler and sends its JSON-encoded result back in a tool message."""
    seen: list[dict[str, Any]] = []
    call = ToolCall("echo", {"text": "hi"}, id="c1")
    model = scripted(say("", call), say("done"))
    result = run_agent(new_agent_options(model, tools=[echo_tool(seen)]), session("s"), "go")
    assert seen == [{"text": "hi"}]
    assert result.output == "done" and result.steps == 2 and result.tool_calls == 1
    tool_message = result.session.messages[2]
    assert tool_message == Message(
        role="tool", content='{"echo":"hi"}', tool_call_id="c1", name="echo"
    )
    assert model.requests[1].messages[-1] == tool_message
    assert model.requests[1].step == 2


def test_several_calls_in_one_message_run_in_order(scripted: Any) -> None:
    """Every call of one assistant message runs, in order, each answered by its own message."""
    order: list[str] = []

    def make(name: str) -> Tool:
        return Tool(name, "", {}, lambda a: order.append(name) or name)

    calls = [ToolCall("b", {}, id="1"), ToolCall("a", {}, id="2")]
    model = scripted(say("", *calls), say("ok"))
    result = run_agent(new_agent_options(model, tools=[make("a"), make("b")]), session("s"), "x")
    assert order == ["b", "a"]
    assert [(m.tool_call_id, m.content) for m in result.session.messages[2:4]] == [
        ("1", '"b"'),
        ("2", '"a"'),
    ]


def test_tool_error_return_becomes_error_json(scripted: Any) -> None:
    """A ToolError return becomes a tool message with the error code and message."""
    tool = Tool("t", "", {}, lambda a: ToolError("NOPE", "not today"))
    model = scripted(say("", ToolCall("t", {})), say("ok"))
    result = run_agent(new_agent_options(model, tools=[tool]), session("s"), "x")
    content = result.session.messages[2].content
    assert isinstance(content, str)
    assert json.loads(content) == {"error": {"code": "NOPE", "message": "not today"}}


def test_tool_message_without_call_id(scripted: Any) -> None:
    """A call without an id is answered by a tool message without an id; none is generated."""
    model = scripted(say("", ToolCall("echo", {"text": "a"})), say("ok"))
    result = run_agent(new_agent_options(model, tools=[echo_tool()]), session("s"), "x")
    assert result.session.messages[2].tool_call_id is None
    assert result.session.messages[2].name == "echo"


def test_handler_mutation_changes_nothing_recorded(scripted: Any) -> None:
    """A handler that mutates its arguments leaves the recorded call unchanged."""

    def handler(arguments: dict[str, Any]) -> str:
        arguments["text"] = "changed"
        arguments["nested"]["x"] = 2
        return "ok"

    call = ToolCall("m", {"text": "orig", "nested": {"x": 1}})
    model = scripted(say("", call), say("done"))
    result = run_agent(
        new_agent_options(model, tools=[Tool("m", "", {}, handler)]), session("s"), ""
    )
    assert call.arguments == {"text": "orig", "nested": {"x": 1}}
    assert result.session.messages[1].tool_calls[0].arguments == {
        "text": "orig",
        "nested": {"x": 1},
    }


def test_handler_receives_arguments_equal_to_the_models(scripted: Any) -> None:
    """The handler's arguments equal the model's call arguments, nested values included."""
    seen: list[dict[str, Any]] = []
    args = {"text": "x", "list": [1, {"a": None}], "f": 1.5, "b": True}
    model = scripted(say("", ToolCall("echo", args)), say("ok"))
    run_agent(new_agent_options(model, tools=[echo_tool(seen)]), session("s"), "")
    assert seen == [args]


def test_text_tool_calls_are_parsed_when_message_has_none(scripted: Any) -> None:
    """Tool-call markup in the text runs the tool when the message carries no structured calls."""
    seen: list[dict[str, Any]] = []
    markup = '<tool_call name="echo" id="t1">{"text":"hi"}</tool_call>'
    model = scripted(say(markup), say("done"))
    result = run_agent(new_agent_options(model, tools=[echo_tool(seen)]), session("s"), "x")
    assert seen == [{"text": "hi"}]
    call = ToolCall("echo", {"text": "hi"}, "t1")
    assert result.session.messages[1] == message_assistant("", tool_calls=[call])
    assert result.session.messages[2].tool_call_id == "t1"


def test_text_tool_calls_are_ignored_when_parsing_is_off(scripted: Any) -> None:
    """With parse_text_tool_calls=False, markup in the text is the final answer."""
    markup = '<tool_call name="echo">{"text":"hi"}</tool_call>'
    options = new_agent_options(
        scripted(say(markup)), tools=[echo_tool()], parse_text_tool_calls=False
    )
    result = run_agent(options, session("s"), "x")
    assert result.output == markup and result.tool_calls == 0


def test_structured_calls_take_precedence_over_text(scripted: Any) -> None:
    """When the message carries tool calls, markup in its text is not parsed as well."""
    seen: list[dict[str, Any]] = []
    text = '<tool_call name="echo">{"text":"from text"}</tool_call>'
    model = scripted(say(text, ToolCall("echo", {"text": "structured"})), say("ok"))
    run_agent(new_agent_options(model, tools=[echo_tool(seen)]), session("s"), "x")
    assert seen == [{"text": "structured"}]


def test_malformed_markup_becomes_error_message_and_loop_continues(scripted: Any) -> None:
    """Malformed tool-call markup is answered with an error tool message and the loop goes on."""
    model = scripted(say('<tool_call name="echo">{"text":"hi"}'), say("sorry"))
    result = run_agent(new_agent_options(model, tools=[echo_tool()]), session("s"), "x")
    assert result.output == "sorry" and result.steps == 2 and result.tool_calls == 0
    error = result.session.messages[2]
    assert error.role == "tool"
    assert isinstance(error.content, str)
    assert json.loads(error.content)["error"]["code"] == "TOOL_CALL_MALFORMED"
    assert model.requests[1].messages[-1] == error


def test_text_blocks_form_the_output(scripted: Any) -> None:
    """An answer given as blocks has the text of its text blocks as output."""
    reply = Message(role="assistant", content=[TextBlock("a"), ImageBlock("u"), TextBlock("b")])
    result = run_agent(new_agent_options(scripted(response(reply))), session("s"), "x")
    assert result.output == "ab"


def test_message_input_is_appended_as_given(scripted: Any) -> None:
    """A user Message given as input is appended unchanged."""
    user = Message(role="user", content=[TextBlock("look"), ImageBlock("http://x/a.png")])
    model = scripted(say("ok"))
    result = run_agent(new_agent_options(model), session("s"), user)
    assert model.requests[0].messages == [user]
    assert result.session.messages[0] is user


def test_bad_input_types_raise_type_error() -> None:
    """A non-str input, a non-Session session or non-options raise TypeError before running."""
    options = new_agent_options(lambda r: say("x"))
    with pytest.raises(TypeError):
        run_agent(options, session("s"), 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        run_agent(options, "s", "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        run_agent({"model": None}, session("s"), "x")  # type: ignore[arg-type]


def test_model_error_fails_the_run_with_its_code(scripted: Any) -> None:
    """A ModelError fails the run with the model's own code and message."""
    with pytest.raises(AgentError) as info:
        run_agent(
            new_agent_options(scripted(ModelError("RATE_LIMITED", "slow down"))), session("s"), "x"
        )
    assert info.value.code == "RATE_LIMITED"
    assert info.value.message == "slow down"
    assert info.value.run_id is not None and info.value.run_id.startswith("run_")
    assert isinstance(info.value, PraxoError)


def test_malformed_model_return_raises_type_error(scripted: Any) -> None:
    """A model returning neither Response nor ModelError raises TypeError, not a model error."""
    with pytest.raises(TypeError, match="Response or ModelError"):
        run_agent(new_agent_options(scripted({"text": "hi"})), session("s"), "x")


def test_model_exception_propagates_unchanged(scripted: Any) -> None:
    """An exception raised by the model propagates as the same object."""
    boom = RuntimeError("boom")

    def model(request: Request) -> Response:
        raise boom

    with pytest.raises(RuntimeError) as info:
        run_agent(new_agent_options(model), session("s"), "x")
    assert info.value is boom


def test_tool_exception_propagates_unchanged(scripted: Any) -> None:
    """An exception raised by a tool handler propagates as the same object."""
    boom = KeyError("k")

    def handler(arguments: dict[str, Any]) -> Any:
        raise boom

    model = scripted(say("", ToolCall("t", {})))
    with pytest.raises(KeyError) as info:
        run_agent(new_agent_options(model, tools=[Tool("t", "", {}, handler)]), session("s"), "x")
    assert info.value is boom


def test_non_json_tool_return_raises_type_error(scripted: Any) -> None:
    """A tool returning a value that cannot be JSON-encoded raises TypeError from the run."""
    model = scripted(say("", ToolCall("t", {})))
    tool = Tool("t", "", {}, lambda a: {1, 2})
    with pytest.raises(TypeError, match="not JSON") as info:
        run_agent(new_agent_options(model, tools=[tool]), session("s"), "x")
    assert isinstance(info.value.__cause__, PraxoError)


def test_max_steps_fails_after_that_many_model_calls(scripted: Any) -> None:
    """A model that keeps calling tools fails the run with AGENT_MAX_STEPS after max_steps calls."""
    model = scripted(*[say("", ToolCall("echo", {"text": str(i)})) for i in range(3)])
    options = new_agent_options(model, tools=[echo_tool()], max_steps=3)
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_MAX_STEPS"
    assert len(model.requests) == 3


def test_answer_on_last_step_completes(scripted: Any) -> None:
    """A final answer on the last allowed step completes the run."""
    model = scripted(say("", ToolCall("echo", {})), say("done"))
    result = run_agent(new_agent_options(model, tools=[echo_tool()], max_steps=2), session("s"), "")
    assert result.output == "done" and result.steps == 2


def test_unknown_tool_fails_the_run(scripted: Any) -> None:
    """A call to an unregistered tool fails the run with TOOL_NOT_FOUND."""
    model = scripted(say("", ToolCall("missing", {})))
    with pytest.raises(AgentError) as info:
        run_agent(new_agent_options(model, tools=[echo_tool()]), session("s"), "x")
    assert info.value.code == "TOOL_NOT_FOUND"


def test_options_are_reusable_across_runs(scripted: Any) -> None:
    """One options object serves two runs that each start from their own session."""
    model = scripted(say("one"), say("two"))
    options = new_agent_options(model)
    first = run_agent(options, session("a"), "x")
    second = run_agent(options, first.session, "y")
    assert (first.output, second.output) == ("one", "two")
    assert first.run_id != second.run_id
    assert len(second.session.messages) == 4
    assert len(first.session.messages) == 2


def test_explicit_run_id_is_used(scripted: Any) -> None:
    """A run_id given by the caller names the run and its requests."""
    model = scripted(say("ok"))
    result = run_agent(new_agent_options(model), session("s"), "x", run_id="my-run")
    assert result.run_id == "my-run" and model.requests[0].run_id == "my-run"


def test_request_lists_are_copies(scripted: Any) -> None:
    """A model that mutates its request's lists changes nothing the run records."""

    def vandal(request: Request) -> Response:
        request.messages.clear()
        request.tools.clear()
        return say("ok")

    options = new_agent_options(vandal, tools=[echo_tool()])
    result = run_agent(options, session("s"), "x")
    assert result.session.messages == [message_user("x"), message_assistant("ok")]
    assert len(options._advertised) == 1


@pytest.mark.parametrize("with_sink", [False, True])
def test_a_model_raising_stop_iteration_propagates_unchanged(with_sink: bool) -> None:
    """A sync model's StopIteration leaves run_agent as itself, not as a RuntimeError, also
    when a sink is told of the failure first."""
    from praxo_actors.agent import new_agent_options, run_agent
    from praxo_actors.models import session as new_session

    raised = StopIteration("model ran dry")

    def model(request: object) -> object:
        raise raised

    events: list[Any] = []
    options = new_agent_options(model, sink=events.append if with_sink else None)
    with pytest.raises(StopIteration) as info:
        run_agent(options, new_session("s"), "x")
    assert info.value is raised
    if with_sink:
        assert events[-1].type == "run.failed"
        assert events[-1].data["message"] == "StopIteration: model ran dry"


@pytest.mark.parametrize("with_sink", [False, True])
def test_an_async_tool_raising_stop_iteration_reaches_arun_agent(with_sink: bool) -> None:
    """Under arun_agent the tool's StopIteration leaves the coroutine as Python makes it
    (RuntimeError, PEP 479) with the tool's own exception as its cause, sink or not."""
    import asyncio

    from praxo_actors.agent import Tool, arun_agent, new_agent_options
    from praxo_actors.models import ToolCall
    from praxo_actors.models import session as new_session

    raised = StopIteration("tool ran dry")

    def tool(arguments: dict[str, Any]) -> Any:
        raise raised

    calls = iter([say("", ToolCall("t", {}, id="c1")), say("done")])
    options = new_agent_options(
        lambda _request: next(calls),
        tools=[Tool("t", "", {}, tool)],
        sink=(lambda _event: None) if with_sink else None,
    )
    with pytest.raises(RuntimeError) as info:
        asyncio.run(arun_agent(options, new_session("s"), "x"))
    assert info.value.__cause__ is raised


def test_text_tool_calls_are_read_in_the_chosen_format(scripted: Any) -> None:
    """With tool_call_format set, the loop reads that family's markup, prefilter or not."""
    seen: list[dict[str, Any]] = []
    # Harmony markup holds none of the characters the default prefilter looks for.
    markup = "<|channel|>commentary to=functions.echo<|message|><|call|>"
    model = scripted(say(markup), say("done"))
    options = new_agent_options(model, tools=[echo_tool(seen)], tool_call_format="openai")
    result = run_agent(options, session("s"), "x")
    assert seen == [{}]
    assert result.output == "done" and result.tool_calls == 1


def test_the_default_set_does_not_read_a_named_format(scripted: Any) -> None:
    """Without tool_call_format, Mistral markup is the final answer."""
    markup = '[TOOL_CALLS]echo[ARGS]{"text": "hi"}'
    result = run_agent(
        new_agent_options(scripted(say(markup)), tools=[echo_tool()]), session("s"), "x"
    )
    assert result.output == markup and result.tool_calls == 0
