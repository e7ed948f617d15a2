"""The real-model task set's checks, on scripted models: they score and they find faults.

No server: a model that writes its calls as bare JSON text and then answers scores every task
with no fault; a history or an answer that the library would have got wrong is a fault.
"""

from __future__ import annotations

import asyncio
import re

from _tasks import TASKS, Report, check_answer, check_wire, run_tasks

from praxo_actors.models import (
    Request,
    Response,
    message_assistant,
    message_tool,
    message_user,
)

EXPECTED = dict(TASKS)


async def bare_json_caller(request: Request) -> Response:
    """Call ``add(0, expected)`` as bare JSON text, then state the tool's result."""
    question = request.messages[0].content
    assert isinstance(question, str)
    results = [m.content for m in request.messages if m.role == "tool"]
    if not results:
        call = f'{{"name": "add", "arguments": {{"a": 0, "b": {EXPECTED[question]}}}}}'
        return Response(message_assistant(call))
    return Response(message_assistant(f"The answer is {results[-1]}."))


def test_a_model_that_calls_then_answers_scores_every_task() -> None:
    """Every call read from the text runs once, goes back as a tool result; all ten right."""
    report: Report = asyncio.run(run_tasks(bare_json_caller))
    assert report.faults == [], report.summary()
    assert report.score == report.called == len(TASKS) == 10
    assert [o.ran for o in report.outcomes] == [1] * 10
    assert report.echoed == 0
    assert all(re.search(r"\+1 calls$", line) for line in report.transcript[::2])


async def echo_in_a_call(request: Request) -> Response:
    """Call ``add`` in tags, then write its result in an object naming it (no arguments)."""
    question = request.messages[0].content
    assert isinstance(question, str)
    if not any(m.role == "tool" for m in request.messages):
        tagged = '<tool_call>{"name": "add", "arguments": {"a": 0, "b": %d}}</tool_call>'
        return Response(message_assistant(tagged % EXPECTED[question]))
    result = request.messages[-1].content
    return Response(message_assistant(f'{{"name": "add", "result": {result}}}'))


def test_a_number_written_in_call_markup_is_no_answer() -> None:
    """Scored wrong, counted as echoed, and not the library's fault."""
    report = asyncio.run(run_tasks(echo_in_a_call))
    assert (report.score, report.echoed, report.called) == (0, 10, 10)
    assert report.faults == [], report.summary()


def test_a_tool_result_that_answers_no_call_is_a_fault() -> None:
    """A result with no call before it goes out as a user message: a wrong role."""
    history = [message_user("x"), message_assistant("Adding."), message_tool(None, "add", "2")]
    faults: list[str] = []
    check_wire(Request(history, [], "r", "s", 2), faults)
    assert faults == ["step 2: message 2 is a user message after a reply"]


def test_an_answer_that_is_a_call_is_a_fault() -> None:
    """A call the loop would read, returned as the run's answer, is a call never run."""
    faults: list[str] = []
    check_answer("q", '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>', faults)
    check_answer("q", '{"name": "add", "arguments": {}}', faults)
    check_answer("q", "The answer is 42.", faults)
    check_answer("q", "<tool_call>{broken</tool_call>", faults)  # malformed: text
    assert len(faults) == 2 and all("the answer is a call" in f for f in faults)
