"""pii=True: what the model sees redacted, and everything that is left as it was."""

from __future__ import annotations

import json
from typing import Any

from _helpers import say

from praxo_actors.agent import Tool, new_agent_options, run_agent
from praxo_actors.models import (
    ImageBlock,
    Message,
    Session,
    TextBlock,
    ToolCall,
    message_assistant,
    message_system,
    message_user,
)

EMAIL = "ada@example.com"
PHONE = "(555) 123-4567"


def test_default_sends_messages_unredacted(scripted: Any) -> None:
    """Without pii the model sees the text as written."""
    model = scripted(say("ok"))
    run_agent(new_agent_options(model), Session(id="s"), f"mail {EMAIL}")
    assert model.requests[0].messages[0].content == f"mail {EMAIL}"


def test_model_sees_redacted_content_of_every_role(scripted: Any) -> None:
    """System, user and earlier assistant content reach the model redacted."""
    start = Session(
        id="s",
        messages=[message_system(f"owner {EMAIL}"), message_assistant(f"call {PHONE}")],
    )
    model = scripted(say("ok"))
    run_agent(new_agent_options(model, pii=True), start, f"I am {EMAIL}")
    contents = [m.content for m in model.requests[0].messages]
    assert contents == [
        "owner [REDACTED_EMAIL]",
        "call [REDACTED_PHONE]",
        "I am [REDACTED_EMAIL]",
    ]


def test_text_blocks_are_redacted_and_other_blocks_kept(scripted: Any) -> None:
    """Text blocks are redacted; an image block is passed through as it is."""
    image = ImageBlock(url=f"https://x/{EMAIL}.png", media_type="image/png")
    user = Message(role="user", content=[TextBlock(f"me: {EMAIL}"), image])
    model = scripted(say("ok"))
    run_agent(new_agent_options(model, pii=True), Session(id="s"), user)
    sent = model.requests[0].messages[0].content
    assert sent == [TextBlock("me: [REDACTED_EMAIL]"), image]


def test_tool_call_arguments_are_not_redacted(scripted: Any) -> None:
    """The tool handler, and the model on later steps, see the original arguments."""
    seen: list[dict[str, Any]] = []
    tool = Tool("mail", "", {}, lambda a: seen.append(a) or "sent")
    model = scripted(say("", ToolCall("mail", {"to": EMAIL})), say("done"))
    run_agent(new_agent_options(model, tools=[tool], pii=True), Session(id="s"), "x")
    assert seen == [{"to": EMAIL}]
    assert model.requests[1].messages[1].tool_calls[0].arguments == {"to": EMAIL}


def test_tool_result_strings_are_redacted_but_keys_are_not(scripted: Any) -> None:
    """String values in a tool result are redacted before encoding; keys and numbers stay."""
    result = {EMAIL: [f"phone {PHONE}", 5, None], "ok": True}
    tool = Tool("who", "", {}, lambda a: result)
    model = scripted(say("", ToolCall("who", {})), say("done"))
    out = run_agent(new_agent_options(model, tools=[tool], pii=True), Session(id="s"), "x")
    content = out.session.messages[2].content
    assert isinstance(content, str)
    assert json.loads(content) == {EMAIL: ["phone [REDACTED_PHONE]", 5, None], "ok": True}
    assert result == {EMAIL: [f"phone {PHONE}", 5, None], "ok": True}


def test_events_output_and_session_are_not_redacted(scripted: Any, events: Any) -> None:
    """Events, the final output and the history's own messages keep the original text."""
    start = Session(id="s", messages=[message_user(f"earlier {EMAIL}")])
    model = scripted(say(f"your mail is {EMAIL}"))
    out = run_agent(new_agent_options(model, pii=True, sink=events), start, f"hi {EMAIL}")
    assert out.output == f"your mail is {EMAIL}"
    assert events[0].data["input"] == f"hi {EMAIL}"
    assert events[-1].data["output"] == f"your mail is {EMAIL}"
    assert start.messages == [message_user(f"earlier {EMAIL}")]
    assert out.session.messages[:2] == [
        message_user(f"earlier {EMAIL}"),
        message_user(f"hi {EMAIL}"),
    ]


def test_tool_completed_event_carries_unredacted_output(scripted: Any, events: Any) -> None:
    """tool.completed reports the tool's output before redaction."""
    tool = Tool("who", "", {}, lambda a: EMAIL)
    model = scripted(say("", ToolCall("who", {})), say("done"))
    run_agent(new_agent_options(model, tools=[tool], pii=True, sink=events), Session(id="s"), "x")
    completed = next(e for e in events if e.type == "tool.completed")
    assert completed.data["output"] == json.dumps(EMAIL)


def test_tool_error_message_is_redacted(scripted: Any) -> None:
    """A ToolError's message is a tool result too: its text is redacted, its code kept."""
    from praxo_actors.agent import ToolError

    tool = Tool("t", "", {}, lambda a: ToolError("NO_USER", f"no {EMAIL}"))
    model = scripted(say("", ToolCall("t", {})), say("done"))
    out = run_agent(new_agent_options(model, tools=[tool], pii=True), Session(id="s"), "x")
    content = out.session.messages[2].content
    assert isinstance(content, str)
    assert json.loads(content) == {"error": {"code": "NO_USER", "message": "no [REDACTED_EMAIL]"}}
