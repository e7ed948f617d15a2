"""Ten small tasks for a real model with three tools, scored, and checked for the library's faults.

Each task needs one or two tool calls (``add``, ``multiply``, ``stock``: a count from a fixed
table the model cannot know). A task is right when its answer holds the expected number. What
the library must never do, whatever the model writes, is checked on every request the model was
sent, in the shape the adapter sends it: a call dropped (a call read from the reply that did not
run), a tool result sent as anything but a tool message answering a call sent before it, or a
run failing with a code that is the library's (a bad request, a bad response, a callback's
exception). The model's own failures (too many steps, a tool it made up) only cost the score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from praxo_actors import ToolCallError
from praxo_actors.agent import AgentError, Tool, arun_agent, new_agent_options, tool
from praxo_actors.core import parse_tool_calls
from praxo_actors.models import Event, Request, Response, session
from praxo_actors.providers._openai_wire import to_messages

STOCK = {"apples": 17, "pears": 25, "plums": 8, "figs": 31}

TASKS: tuple[tuple[str, int], ...] = (
    ("What is 17 plus 25?", 42),
    ("What is 123 plus 456?", 579),
    ("What is 12 times 13?", 156),
    ("What is 9 times 8?", 72),
    ("How many apples are in stock?", 17),
    ("How many figs are in stock?", 31),
    ("What is 3 plus 4, multiplied by 5?", 35),
    ("How many plums are in stock? Multiply that number by 3.", 24),
    ("Add 250 and 750.", 1000),
    ("How many pears are in stock, plus 5?", 30),
)

# Codes a run may end with that are the model's doing, not the library's.
MODEL_FAULTS = frozenset({"AGENT_MAX_STEPS", "TOOL_NOT_FOUND", "AGENT_TOOL_RETRIES"})


def tools() -> list[Tool]:
    """Return the three tools."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first number.
            b: The second number.
        """
        return a + b

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers.

        Args:
            a: The first number.
            b: The second number.
        """
        return a * b

    @tool
    def stock(item: str) -> str:
        """Return how many of a fruit are in stock.

        Args:
            item: The fruit, e.g. "apples".
        """
        key = item.strip().casefold()
        count = STOCK.get(key, STOCK.get(key + "s"))
        return f"{count} {key} in stock" if count is not None else f"no {item!r} in stock"

    return [add, multiply, stock]


@dataclass
class Outcome:
    """What one task came to."""

    question: str
    expected: int
    output: str | None = None
    code: str | None = None
    right: bool = False
    ran: int = 0  # tool calls that ran (every one read from the model's text on this server)


@dataclass
class Report:
    """The score and every fault of the library found."""

    outcomes: list[Outcome] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(outcome.right for outcome in self.outcomes)

    @property
    def echoed(self) -> int:
        """Wrong answers that hold the number inside call markup (the first scorer counted them)."""
        return sum(
            not o.right and o.output is not None and _states(o.output, o.expected)
            for o in self.outcomes
        )

    @property
    def called(self) -> int:
        """Tasks in which at least one tool call ran."""
        return sum(outcome.ran > 0 for outcome in self.outcomes)

    def summary(self) -> str:
        lines = [
            f"{self.score}/{len(self.outcomes)} right, {self.called} with a call that ran, "
            f"{self.echoed} with the number in call markup instead of an answer"
        ]
        for o in self.outcomes:
            mark = "right" if o.right else "wrong"
            lines.append(f"  {mark}: {o.question!r} -> {o.code or repr(o.output)[:80]}")
        return "\n".join([*lines, *self.faults])


def holds(output: str, expected: int) -> bool:
    """Return whether ``output`` is an answer stating ``expected`` (``1000`` or ``1,000``).

    Text that still looks like a call (a JSON object naming a function) is no answer, even
    when its arguments hold the number.
    """
    if '"name"' in output or "<tool_call>" in output:
        return False
    return _states(output, expected)


def _states(output: str, expected: int) -> bool:
    numbers = re.findall(r"-?\d[\d,]*", output)
    return any(n.replace(",", "") == str(expected) for n in numbers)


def check_wire(request: Request, faults: list[str]) -> None:
    """Record each fault of the messages the adapter sends for ``request``."""
    wire = to_messages(request.messages)
    sent: set[str] = set()
    answered = False  # an assistant message came: a user message now is a wrong role
    for index, message in enumerate(wire):
        role = message["role"]
        answered = answered or role == "assistant"
        if role == "assistant" and _calls_in(message.get("content")):
            faults.append(f"step {request.step}: message {index} holds a call as its text")
        for call in message.get("tool_calls") or ():
            if not (call.get("id") and call["function"].get("name")):
                faults.append(f"step {request.step}: a call without id or name: {call}")
            sent.add(call["id"])
        if role == "tool" and message.get("tool_call_id") not in sent:
            faults.append(f"step {request.step}: message {index} answers no call sent")
        if role == "user" and answered and not _markup_report(message["content"]):
            faults.append(f"step {request.step}: message {index} is a user message after a reply")


def check_answer(question: str, output: str, faults: list[str]) -> None:
    """Record an answer that is a call the loop reads (a call returned as text, never run)."""
    if _calls_in(output):
        faults.append(f"{question!r}: the answer is a call: {output[:80]!r}")


def _calls_in(content: Any) -> bool:
    """Whether ``content`` is text holding a call the loop's default parser reads."""
    if not isinstance(content, str):
        return False
    try:
        return bool(parse_tool_calls(content))
    except ToolCallError:
        return False  # malformed markup is text: the loop reports it to the model


def _markup_report(content: Any) -> bool:
    """Whether a user message is the loop's report of malformed markup (it answers no call)."""
    return isinstance(content, str) and content.startswith('{"error":{"code":"TOOL_CALL_')


def check_events(events: list[Event], faults: list[str]) -> None:
    """Record a call read from a reply that did not run (a dropped call)."""
    said: dict[int, int] = {}
    ran: dict[int, int] = {}
    for event in events:
        if event.type == "model.responded":
            said[event.data["step"]] = event.data["tool_calls"]
        elif event.type == "tool.completed":
            ran[event.data["step"]] = ran.get(event.data["step"], 0) + 1
    for step, count in said.items():
        if ran.get(step, 0) != count and count:
            faults.append(f"step {step}: {count} calls read, {ran.get(step, 0)} ran")


async def run_tasks(model: Any, *, instructions: str | None = None, max_steps: int = 3) -> Report:
    """Run every task on ``model`` with the default options (and ``instructions``).

    ``max_steps`` bounds the cost of a model that calls tools to no end (a task needs at most
    three steps).
    """
    report = Report()
    for number, (question, expected) in enumerate(TASKS):
        events: list[Event] = []
        requests: list[Request] = []

        async def recorded(request: Request, requests: list[Request] = requests) -> Any:
            requests.append(request)
            reply: Response = await model(request)
            return reply

        options = new_agent_options(
            recorded,
            tools=tools(),
            sink=events.append,
            max_steps=max_steps,
            instructions=instructions,
        )
        outcome = Outcome(question, expected)
        try:
            result = await arun_agent(options, session(f"task{number}"), question)
        except AgentError as exc:
            outcome.code = exc.code
            if exc.code not in MODEL_FAULTS:
                report.faults.append(f"{question!r}: failed with {exc.code}: {exc.message}")
        else:
            outcome.output = result.output
            check_answer(question, result.output, report.faults)
            outcome.right = holds(result.output, expected)
        for request in requests:
            check_wire(request, report.faults)
        check_events(events, report.faults)
        outcome.ran = sum(event.type == "tool.completed" for event in events)
        report.outcomes.append(outcome)
        report.transcript.extend(
            f"  {question[:24]!r} step {e.data['step']}: {e.data['content'][:60]!r} "
            f"+{e.data['tool_calls']} calls"
            for e in events
            if e.type == "model.responded"
        )
    return report
