"""Shared helpers of the runtime tests: models that block or count, and a clock moved until a
condition holds (a wait for another thread is ``eventually``, in ``praxo_actors.testing``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

from praxo_actors import PraxoError
from praxo_actors.agent import AgentOptions, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import RunFuture, Runtime, agent_tool
from praxo_actors.testing import EchoModel, ManualClock

TIMEOUT = 10.0


def advance_until(
    rt: Runtime, clock: ManualClock, condition: Callable[[], bool], step: float, tries: int = 100
) -> None:
    """Move ``clock`` on by ``step`` until ``condition`` holds; fail the test after ``tries``.

    For conditions other threads race to: an advance returns once the runtime has acted on
    the timers it fired, but one that another thread's advance fired may still be on its way
    to the loop, so each step ends with a loop round trip (``statistics()``), behind it.
    """
    for _ in range(tries):
        if condition():
            return
        clock.advance(step)
        rt.statistics()
    pytest.fail(f"condition not met within {tries} steps of {step} s")


def echo_agent() -> AgentOptions:
    """Return options whose model echoes the user's last message."""
    return new_agent_options(EchoModel())


def error_code(future: RunFuture, timeout: float = TIMEOUT) -> str:
    """Return the code of the PraxoError the future fails with (fail if it completes)."""
    with pytest.raises(PraxoError) as info:
        future.get(timeout=timeout)
    return info.value.code


def contents(messages: list[Any]) -> list[Any]:
    """Return the content of each message."""
    return [m.content for m in messages]


class Gate:
    """A sync model that blocks every call until released, counting the calls that entered.

    ``entered(n)`` waits until ``n`` calls are blocked inside; ``release()`` lets all go.
    Each call answers ``"<last user text>!"``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entered = threading.Condition(self._lock)
        self._open = threading.Event()
        self.calls = 0
        self.threads: set[str] = set()

    def __call__(self, request: Request) -> Response:
        with self._lock:
            self.calls += 1
            self.threads.add(threading.current_thread().name)
            self._entered.notify_all()
        if not self._open.wait(TIMEOUT):
            raise TimeoutError("the gate was never released")
        user = [m for m in request.messages if m.role == "user"][-1]
        return Response(message_assistant(f"{user.content}!"))

    def entered(self, n: int, timeout: float = TIMEOUT) -> None:
        """Wait until ``n`` calls have entered the model (fail the test otherwise)."""
        with self._lock:
            if not self._entered.wait_for(lambda: self.calls >= n, timeout):
                pytest.fail(f"{self.calls} of {n} model calls entered within {timeout} s")

    def release(self) -> None:
        """Let every blocked and future call return."""
        self._open.set()

    def close(self) -> None:
        """Make later calls block again until the next :meth:`release`."""
        self._open.clear()

    def agent(self) -> AgentOptions:
        """Return agent options using this model."""
        return new_agent_options(self)


def caller(agent: str, name: str | None = None, **tool_options: Any) -> Callable[[], AgentOptions]:
    """An agent that asks the agent tool once with its input, then answers what it was told."""
    tool_name = name or agent

    def model(request: Request) -> Response:
        last = request.messages[-1]
        if last.role == "tool":
            text = str(last.content)  # the child's output as text, or an error as JSON
            told = json.loads(text) if text.startswith('{"error"') else text
            return Response(message_assistant(f"told: {told}"))
        call = ToolCall(tool_name, {"input": f"sub {last.content}"}, id="c1")
        return Response(message_assistant("", [call]))

    tool = agent_tool(agent, name=name, **tool_options)
    return lambda: new_agent_options(model, tools=[tool])
