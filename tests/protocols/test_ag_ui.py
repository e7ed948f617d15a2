"""The AG-UI app over real HTTP: every stream passes ``ag-ui-validate`` with no error or warning.

The app is served by uvicorn on a loopback port; requests go through httpx, and each stream is
checked by the ``ag-ui-validate`` command itself, against the live endpoint or a recording.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from _helpers import assert_no_new_threads
from _served import TIMEOUT, served

from praxo_actors.agent import Interrupt, Tool, model_context, new_agent_options
from praxo_actors.middleware import require_approval
from praxo_actors.models import ModelError, Request, Response, ToolCall, message_assistant
from praxo_actors.protocols import ag_ui_app
from praxo_actors.runtime import Runtime
from praxo_actors.testing import FunctionModel

VALIDATE = str(Path(sys.executable).with_name("ag-ui-validate"))


def chat(request: Request) -> Response | ModelError:
    """Answer by the last message: call the tools the words name, else echo."""
    last = request.messages[-1]
    if last.role != "user":
        return Response(message_assistant(f"result: {last.content}"))
    text = str(last.content)
    if text == "fail":
        return ModelError("MODEL_UNAVAILABLE", "the model is down")
    if text == "boom":
        raise RuntimeError("a bug in the model callback")
    if text == "stream":
        context = model_context()
        assert context is not None
        context.delta("Hel")
        context.delta("lo")
        return Response(message_assistant("Hello"))
    offered = {spec.name for spec in request.tools}
    for name, arguments in (("add", {"a": 2, "b": 3}), ("confirm", {"question": "sure?"})):
        if name in text and name in offered:
            return Response(message_assistant("Let me see.", [ToolCall(name, arguments, id="c1")]))
    return Response(message_assistant(f"You said: {text}"))


def agent(approval: bool = False) -> Any:
    add = Tool("add", "Add two numbers", {"type": "object"}, lambda a: a["a"] + a["b"])
    gate = require_approval(["add"]) if approval else None
    return new_agent_options(FunctionModel(chat), tools=[add], approval=gate)


@dataclass
class Served:
    runtime: Runtime
    url: str
    client: httpx.Client
    tmp: Path

    def post(self, body: Any, path: str = "/") -> tuple[list[dict[str, Any]], Path]:
        """POST ``body``; return the stream's events and the file it was recorded in."""
        recording = self.tmp / f"{body['runId']}.sse"
        with self.client.stream("POST", self.url + path, json=body) as reply:
            assert reply.status_code == 200, reply.read()
            assert reply.headers["content-type"].startswith("text/event-stream")
            raw = b"".join(reply.iter_bytes())
        recording.write_bytes(raw)
        frames = [f for f in raw.decode().split("\n\n") if f.strip()]
        return [json.loads(f.removeprefix("data: ")) for f in frames], recording


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Served]:
    """Serve the AG-UI apps of a plain and an approving agent; stop server and runtime after."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    before = set(threading.enumerate())
    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    try:
        runtime.register_agent("default", agent)
        runtime.register_agent("careful", lambda: agent(approval=True))
        both = Starlette(
            routes=[
                Mount("/careful", ag_ui_app(runtime, agent="careful")),
                Mount("/", ag_ui_app(runtime)),
            ]
        )
        with served(both) as url, httpx.Client(timeout=TIMEOUT) as client:
            yield Served(runtime, url, client, tmp_path)
    finally:
        runtime.stop()
    assert_no_new_threads(before, TIMEOUT)


def validate(target: str) -> dict[str, Any]:
    """Run ``ag-ui-validate`` on a URL or a recording; return its JSON report."""
    done = subprocess.run(
        [VALIDATE, target, "--json", "--fail-on", "warning", "--timeout", str(TIMEOUT)],
        capture_output=True,
        timeout=TIMEOUT * 3,
        check=False,
    )
    report: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == 0, report["diagnostics"]
    assert report["summary"]["errors"] == 0 and report["summary"]["warnings"] == 0, report
    assert report["eventCount"] > 0
    return report


def user(text: str, id: str = "m1") -> dict[str, Any]:
    return {"id": id, "role": "user", "content": text}


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def test_the_validator_finds_nothing_wrong_with_a_live_run(app: Served) -> None:
    """ag-ui-validate POSTs its own input to the live endpoint and reports no error or warning."""
    report = validate(app.url + "/")
    assert report["features"]["agentic-chat"] != "not-exercised"


def test_a_plain_run_streams_text_with_the_clients_ids(app: Served) -> None:
    """A user message runs in the thread's session; the events carry threadId and runId."""
    body = {"threadId": "t-plain", "runId": "r1", "messages": [user("hello")]}
    events, recording = app.post(body)
    validate(str(recording))
    assert kinds(events) == [
        "RUN_STARTED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]
    assert (events[0]["threadId"], events[0]["runId"]) == ("t-plain", "r1")
    assert (events[-1]["threadId"], events[-1]["runId"]) == ("t-plain", "r1")
    assert events[3]["delta"] == "You said: hello"
    # The session keeps the history: the client's copy of it is not run again.
    later = [user("hello"), {"id": "a1", "role": "assistant", "content": "You said: hello"}]
    body = {"threadId": "t-plain", "runId": "r2", "messages": [*later, user("again", "m2")]}
    events, _ = app.post(body)
    assert events[3]["delta"] == "You said: again"
    assert len(app.runtime.session("t-plain").history()) == 4


def test_a_run_with_a_backend_tool_streams_the_call_and_its_result(app: Served) -> None:
    """The agent's own tool: TOOL_CALL_START/ARGS/END, then TOOL_CALL_RESULT, then the answer."""
    body = {"threadId": "t-tool", "runId": "r1", "messages": [user("please add")]}
    events, recording = app.post(body)
    validate(str(recording))
    calls = [e for e in events if e["type"].startswith("TOOL_CALL")]
    assert [e["type"] for e in calls] == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ]
    assert calls[0]["toolCallName"] == "add" and calls[0]["toolCallId"] == "c1"
    assert json.loads(calls[1]["delta"]) == {"a": 2, "b": 3}
    assert calls[3]["content"] == "5"
    texts = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert texts == ["Let me see.", "result: 5"]
    assert events[-1]["type"] == "RUN_FINISHED"


def test_a_frontend_tool_call_ends_the_run_and_its_result_resumes_it(app: Served) -> None:
    """The client's tool is offered; its call ends the run pending; the tool message resumes."""
    tools = [{"name": "confirm", "description": "Ask the user", "parameters": {"type": "object"}}]
    first = [user("confirm it")]
    body = {"threadId": "t-front", "runId": "r1", "messages": first, "tools": tools}
    events, recording = app.post(body)
    validate(str(recording))
    assert events[-1]["type"] == "RUN_FINISHED"
    assert events[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["c1"]}
    assert "TOOL_CALL_RESULT" not in kinds(events)
    answered = [
        *first,
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "confirm", "arguments": "{}"}}
            ],
        },
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "yes, go"},
    ]
    body = {"threadId": "t-front", "runId": "r2", "messages": answered, "tools": tools}
    events, recording = app.post(body)
    validate(str(recording))
    texts = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert texts == ["result: yes, go"]
    assert (events[-1]["type"], events[-1]["runId"]) == ("RUN_FINISHED", "r2")


def test_a_failed_run_ends_with_run_error_carrying_its_code(app: Served) -> None:
    """A model failure is RUN_ERROR with the run's code, and the stream still validates."""
    body = {"threadId": "t-fail", "runId": "r1", "messages": [user("fail")]}
    events, recording = app.post(body)
    validate(str(recording))
    assert events[-1]["type"] == "RUN_ERROR"
    assert events[-1]["code"] == "MODEL_UNAVAILABLE"
    assert "RUN_FINISHED" not in kinds(events)


def test_a_callback_that_raises_ends_with_run_error(app: Served) -> None:
    """A model callback's exception fails the run: RUN_ERROR AGENT_CALLBACK_EXCEPTION."""
    body = {"threadId": "t-boom", "runId": "r1", "messages": [user("boom")]}
    events, recording = app.post(body)
    validate(str(recording))
    assert events[-1]["type"] == "RUN_ERROR"
    assert events[-1]["code"] == "AGENT_CALLBACK_EXCEPTION"


def test_streamed_text_arrives_as_the_model_streams_it(app: Served) -> None:
    """The model's deltas are TEXT_MESSAGE_CONTENT events, the text not sent again after."""
    body = {"threadId": "t-stream", "runId": "r1", "messages": [user("stream")]}
    events, recording = app.post(body)
    validate(str(recording))
    texts = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert texts == ["Hel", "lo"]
    assert kinds(events).count("TEXT_MESSAGE_START") == 1


def test_an_approval_interrupts_the_run_and_a_resume_entry_answers_it(app: Served) -> None:
    """require_approval ends the run with an interrupt outcome; resume approves and it goes on."""
    body = {"threadId": "t-ok", "runId": "r1", "messages": [user("add them")]}
    events, recording = app.post(body, "/careful/")
    validate(str(recording))
    outcome = events[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    [interrupt] = outcome["interrupts"]
    assert interrupt["reason"] == "approval" and interrupt["toolCallId"] == "c1"
    assert [e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"] == ["add"]
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": True}]
    body = {"threadId": "t-ok", "runId": "r2", "messages": [user("add them")], "resume": resume}
    events, recording = app.post(body, "/careful/")
    validate(str(recording))
    results = [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert results == ["5"]
    assert events[-1]["type"] == "RUN_FINISHED" and "outcome" in events[-1]
    assert events[-1]["outcome"]["type"] == "success"


def test_a_resume_with_nothing_waiting_is_run_error_with_the_code(app: Served) -> None:
    """A resume entry for a thread that waits for nothing ends in RUN_ERROR, validated."""
    resume = [{"interruptId": "x", "status": "resolved", "payload": True}]
    body = {"threadId": "t-none", "runId": "r1", "messages": [user("hi")], "resume": resume}
    events, recording = app.post(body)
    validate(str(recording))
    assert events[-1]["type"] == "RUN_ERROR"
    assert events[-1]["code"] == "SESSION_NOT_INTERRUPTED"


@pytest.mark.parametrize(
    ("content", "headers", "status", "code"),
    [
        (b"{not json", {}, 400, "PROTOCOL_BAD_JSON"),
        (b"[" * 100_000, {}, 400, "PROTOCOL_BAD_JSON"),
        (b"[1, 2]", {}, 422, "PROTOCOL_INVALID_INPUT"),
        (b'{"threadId": 1, "runId": "r", "messages": []}', {}, 422, "PROTOCOL_INVALID_INPUT"),
        (b'{"threadId": "t", "runId": "r", "messages": []}', {}, 422, "PROTOCOL_INVALID_INPUT"),
        (
            b'{"threadId": "", "runId": "r", "messages": [{"id": "1", "role": "user", '
            b'"content": "x"}]}',
            {},
            400,
            "RUNTIME_INVALID_INPUT",
        ),
        (b" " * (4 * 1024 * 1024 + 1), {}, 413, "PROTOCOL_TOO_LARGE"),
        (b"{}", {"Host": "evil.example"}, 421, "PROTOCOL_HOST_REFUSED"),
    ],
)
def test_hostile_input_is_a_4xx_with_a_code(
    app: Served, content: bytes, headers: dict[str, str], status: int, code: str
) -> None:
    """Malformed, misshapen, deeply nested, huge or foreign-host requests: 4xx and a code."""
    reply = app.client.post(app.url + "/", content=content, headers=headers)
    assert reply.status_code == status, reply.text
    assert reply.json()["error"]["code"] == code


def test_bad_frontend_tools_are_refused(app: Served) -> None:
    """A tool named as the agent's own, or with a schema that is not an object, is 422."""
    for tool in (
        {"name": "add", "description": "clash", "parameters": {"type": "object"}},
        {"name": "odd", "description": "x", "parameters": [1]},
    ):
        body = {"threadId": "t-bad", "runId": "r", "messages": [user("x")], "tools": [tool]}
        reply = app.client.post(app.url + "/", json=body)
        assert reply.status_code == 422, reply.text
        assert reply.json()["error"]["code"] == "PROTOCOL_INVALID_INPUT"


def test_an_unknown_agent_is_404(app: Served) -> None:
    """An app built for an agent nobody registered answers 404 RUNTIME_UNKNOWN_AGENT."""
    with served(ag_ui_app(app.runtime, agent="nobody")) as url:
        body = {"threadId": "t", "runId": "r", "messages": [user("x")]}
        reply = app.client.post(url + "/", json=body)
    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "RUNTIME_UNKNOWN_AGENT"


def test_distinct_tool_sets_are_bounded(app: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each new set of frontend tools registers an agent, so their number is bounded (429)."""
    from praxo_actors.protocols import _ag_ui_app

    monkeypatch.setattr(_ag_ui_app, "MAX_TOOL_SETS", 2)
    statuses = []
    for n in range(3):
        tools = [{"name": f"tool{n}", "description": "x"}]
        body = {"threadId": f"t-set{n}", "runId": "r", "messages": [user("x")], "tools": tools}
        reply = app.client.post(app.url + "/", json=body)
        statuses.append(reply.status_code)
        if n == 2:
            assert reply.json()["error"]["code"] == "PROTOCOL_TOO_MANY_TOOL_SETS"
    assert statuses == [200, 200, 429]
    again = [{"name": "tool0", "description": "x"}]
    body = {"threadId": "t-set0", "runId": "r2", "messages": [user("y")], "tools": again}
    assert app.client.post(app.url + "/", json=body).status_code == 200


def test_text_that_is_not_unicode_is_refused_with_a_code(app: Served) -> None:
    """A lone surrogate (JSON's ``\\ud800``) in the input or the thread id is 400 with a code."""
    content = b'{"threadId": "t-s", "runId": "r", "messages": [{"id": "1", "role": "user", '
    content += b'"content": "\\ud800"}]}'
    for body in (content, content.replace(b'"t-s"', b'"\\udfff"')):
        reply = app.client.post(app.url + "/", content=body)
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"]["code"] == "PROTOCOL_BAD_JSON"


def test_a_client_that_disconnects_cancels_its_run(app: Served) -> None:
    """Closing the stream mid-run cancels the run at once, its tool in flight included: it
    fails AGENT_CANCELLED and commits nothing."""
    ended: list[Any] = []
    done = threading.Event()

    async def slow(_arguments: dict[str, Any]) -> str:
        never = asyncio.Event()  # only the run's cancellation ends this wait before TIMEOUT
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(never.wait(), TIMEOUT)
        return "not cancelled"

    def model(request: Request) -> Response:
        if request.messages[-1].role == "user":
            return Response(message_assistant("", [ToolCall("slow", {}, id="s1")]))
        return Response(message_assistant(f"after {request.messages[-1].content}"))

    def slow_agent() -> Any:
        return new_agent_options(model, tools=[Tool("slow", "Slow", {}, slow)])

    def on_end(event: Any) -> None:
        if event.type in ("run.completed", "run.failed"):
            ended.append(event)
            done.set()

    app.runtime.register_agent("slow", slow_agent)
    subscription = app.runtime.events.subscribe(on_end, "run.*", "t-gone")
    try:
        with served(ag_ui_app(app.runtime, agent="slow")) as url:
            body = {"threadId": "t-gone", "runId": "r1", "messages": [user("go")]}
            with app.client.stream("POST", url + "/", json=body) as reply:
                for line in reply.iter_lines():
                    if "TOOL_CALL_END" in line:
                        break  # leave while the tool runs: the connection closes
            assert done.wait(TIMEOUT * 2)
    finally:
        subscription.unsubscribe()
    assert [(e.type, e.data.get("code")) for e in ended] == [("run.failed", "AGENT_CANCELLED")]
    assert app.runtime.session("t-gone", "slow").history() == []


def test_a_cancelled_resume_denies_the_call(app: Served) -> None:
    """A resume entry with status cancelled denies the approval: the tool does not run."""
    body = {"threadId": "t-deny", "runId": "r1", "messages": [user("add them")]}
    events, _ = app.post(body, "/careful/")
    [interrupt] = events[-1]["outcome"]["interrupts"]
    resume = [{"interruptId": interrupt["id"], "status": "cancelled"}]
    body = {"threadId": "t-deny", "runId": "r2", "messages": [user("add them")], "resume": resume}
    events, recording = app.post(body, "/careful/")
    validate(str(recording))
    [text] = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert "APPROVAL_DENIED" in text
    assert events[-1]["type"] == "RUN_FINISHED"


def test_a_tools_own_question_is_an_input_required_interrupt(app: Served) -> None:
    """A backend tool's Interrupt ends the run with reason input_required; resume answers it."""

    def ask(_arguments: dict[str, Any]) -> Interrupt:
        return Interrupt({"question": "Which city?"})

    def model(request: Request) -> Response:
        if request.messages[-1].role == "user":
            return Response(message_assistant("", [ToolCall("ask", {}, id="q1")]))
        return Response(message_assistant(f"Booked: {request.messages[-1].content}"))

    app.runtime.register_agent(
        "asker", lambda: new_agent_options(model, tools=[Tool("ask", "Ask", {}, ask)])
    )
    with served(ag_ui_app(app.runtime, agent="asker")) as url:
        body = {"threadId": "t-ask", "runId": "r1", "messages": [user("book")]}
        app.url, before = url, app.url
        try:
            events, recording = app.post(body)
            validate(str(recording))
            [interrupt] = events[-1]["outcome"]["interrupts"]
            assert interrupt["reason"] == "input_required"
            assert interrupt["metadata"]["praxo"] == {"question": "Which city?"}
            resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "Lisbon"}]
            body = {"threadId": "t-ask", "runId": "r2", "messages": [], "resume": resume}
            events, recording = app.post(body)
            validate(str(recording))
        finally:
            app.url = before
    texts = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert texts == ['Booked: "Lisbon"']
