"""Quickstart: the Core helpers, a model function, a tool, and the opt-in middleware.

Run it with ``python examples/quickstart.py``; every step asserts what it shows.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

from praxo_actors import PraxoError
from praxo_actors.agent import Tool, new_agent_options, run_agent
from praxo_actors.core import parse_json, parse_tool_call, validate_schema
from praxo_actors.middleware import call_limit, structured_output, tool_selection
from praxo_actors.models import (
    Event,
    Request,
    Response,
    ToolCall,
    message_assistant,
    response,
    session,
)


def core_helpers() -> None:
    """Parse a tool call out of model text and validate a value against a schema."""
    call = parse_tool_call('<tool_call name="echo">{"text":"hi"}</tool_call>')
    assert call.name == "echo" and call.arguments == {"text": "hi"}

    schema = parse_json('{"type":"string","pattern":"^a+$"}')
    assert validate_schema(schema, "aaa") == []
    assert [e.keyword for e in validate_schema(schema, "abc")] == ["pattern"]
    print(f"parsed {call.name}({json.dumps(call.arguments)}); 'aaa' matches ^a+$")


def a_model_function() -> None:
    """Run the loop with a model that only counts the messages it receives."""

    def model(request: Request) -> Response:
        return response(message_assistant(f"received {len(request.messages)} messages"))

    options = new_agent_options(model)
    result = run_agent(options, session("s1"), "hello")
    assert result.output == "received 1 messages"
    # A second run continues the returned session; the options are reused unchanged.
    again = run_agent(options, result.session, "and again")
    assert again.output == "received 3 messages"
    print(f"{result.run_id}: {result.output!r}, then {again.output!r}")


def calculator_model(request: Request) -> Response:
    """Ask for ``add`` once, then answer with the tool's result as JSON."""
    last = request.messages[-1]
    if last.role == "tool":
        total = json.loads(str(last.content))["sum"]
        return response(message_assistant(f'{{"name": "sum", "value": {total}}}'))
    return response(message_assistant("", [ToolCall("add", {"a": 2, "b": 3}, id="call-1")]))


def add(arguments: dict[str, Any]) -> dict[str, Any]:
    """Add two numbers."""
    return {"sum": arguments["a"] + arguments["b"]}


ADD = Tool(
    "add",
    "Add two numbers.",
    {"type": "object", "required": ["a", "b"], "properties": {"a": {}, "b": {}}},
    add,
)


def tools_and_events() -> None:
    """Let the model call a tool, and watch the run's events."""
    events: list[Event] = []
    options = new_agent_options(calculator_model, tools=[ADD], sink=events.append)
    result = run_agent(options, session("s2"), "what is 2 + 3?")
    assert result.tool_calls == 1 and json.loads(result.output)["value"] == 5
    assert [e.seq for e in events] == list(range(len(events)))
    print(f"tool step: {result.output}; events: {', '.join(e.type for e in events)}")


def tool_selection_example() -> None:
    """Advertise and permit only selected tools; anything else fails before invocation."""
    options = new_agent_options(calculator_model, tools=[ADD])
    narrowed = dataclasses.replace(options, tool_selection=tool_selection(["echo"]))
    try:
        run_agent(narrowed, session("s3"), "what is 2 + 3?")
    except PraxoError as exc:
        assert exc.code == "AGENT_TOOL_NOT_SELECTED"
        print(f"unselected tool refused: {exc.code}")
    else:
        raise AssertionError("the call to 'add' should have been refused")


def middleware_example() -> None:
    """Turn on PII redaction, structured output and call limits together."""
    seen: list[str] = []

    def model(request: Request) -> Response:
        seen.append(str(request.messages[-1].content))
        return response(message_assistant('Here you go: {"name": "Ada"}'))

    options = dataclasses.replace(
        new_agent_options(model),
        pii=True,
        structured_output=structured_output({"type": "object", "required": ["name"]}, 0),
        call_limit=call_limit(4, 8),
    )
    result = run_agent(options, session("s4"), "My email is ada@example.com")
    assert seen == ["My email is [REDACTED_EMAIL]"]
    assert result.structured == {"name": "Ada"}
    assert result.session.messages[0].content == "My email is ada@example.com"
    print(f"model saw {seen[0]!r}; structured output {result.structured}")


def main() -> None:
    """Run every example in order."""
    core_helpers()
    a_model_function()
    tools_and_events()
    tool_selection_example()
    middleware_example()
    print("quickstart: all examples passed")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C: what main() started has stopped by now
        sys.exit(130)
