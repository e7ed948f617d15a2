"""The runtime beside your own supervised actors: a tool that calls a rate-limiter actor.

An application often has actors of its own. Here a ``RateLimiter`` (a token bucket) runs under
the application's own :class:`supervisors.Supervisor`, next to the agent runtime, and an agent
tool asks it before each lookup. When the limiter crashes, its supervisor restarts it with a
fresh bucket; the runtime never notices, and meanwhile the tool answers the model with a
:class:`~praxo_actors.agent.ToolError` instead of failing the run.

The tool finds the limiter through a :class:`LimiterSlot` that the supervisor's start function
fills: after a restart the slot holds the new actor, as a name in a registry would.

Run: ``python examples/supervised_beside.py``
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pykka

from praxo_actors.agent import Tool, ToolError, new_agent_options
from praxo_actors.models import Request, ToolCall, message_assistant, response
from praxo_actors.runtime import Runtime
from supervisors import ChildSpec, Supervisor

TIMEOUT = 5.0


@dataclass(frozen=True)
class Poison:
    """A message that makes the limiter fail, standing in for a bug in it."""


class RateLimiter(pykka.ThreadingActor):
    """A token bucket: ``capacity`` calls at once, refilled at ``rate`` calls per second."""

    def __init__(
        self, capacity: int, rate: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.capacity = capacity
        self.rate = rate
        self.clock = clock
        self.tokens = float(capacity)
        self.updated = clock()

    def acquire(self) -> bool:
        """Take a token if one is left; return whether one was."""
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def on_receive(self, message: Any) -> Any:
        """Fail on :class:`Poison` (told, so the actor stops and its supervisor sees a crash)."""
        if isinstance(message, Poison):
            raise RuntimeError("the rate limiter hit a bug")
        return None


class LimiterSlot:
    """Hold the limiter that is running now; the supervisor's start function fills it."""

    def __init__(self, capacity: int = 3, rate: float = 0.0) -> None:
        self.capacity = capacity
        self.rate = rate
        self.starts = 0
        self._ref: pykka.ActorRef[RateLimiter] | None = None
        self._changed = threading.Condition()

    def start(self) -> pykka.ActorRef[RateLimiter]:
        """Start a limiter (the supervisor calls this at start and at each restart)."""
        ref = RateLimiter.start(self.capacity, self.rate)
        with self._changed:
            self._ref = ref
            self.starts += 1
            self._changed.notify_all()
        return ref

    def current(self) -> pykka.ActorRef[RateLimiter] | None:
        """Return the limiter running now, if any."""
        return self._ref

    def wait_started(self, starts: int, timeout: float) -> bool:
        """Wait until the limiter has been started ``starts`` times; return success."""
        with self._changed:
            return self._changed.wait_for(lambda: self.starts >= starts, timeout)


def lookup_tool(slot: LimiterSlot) -> Tool:
    """Return a ``lookup`` tool that takes a token from the limiter before answering."""

    def lookup(arguments: dict[str, Any]) -> Any:
        city = str(arguments.get("city", ""))
        limiter = slot.current()
        try:
            allowed = limiter is not None and limiter.proxy().acquire().get(timeout=TIMEOUT)
        except pykka.ActorDeadError:
            # Between the crash and the restart: tell the model, do not fail the run.
            return ToolError("LIMITER_UNAVAILABLE", "the rate limiter is restarting")
        if not allowed:
            return ToolError("RATE_LIMITED", "too many lookups; try again later")
        return {"city": city, "forecast": "sunny", "high_c": 21}

    return Tool(
        "lookup",
        "Look up the weather forecast of a city.",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        lookup,
    )


def model(request: Request) -> Any:
    """Look the city up, then report the forecast or the tool's error code."""
    last = request.messages[-1]
    if last.role == "user":
        return response(message_assistant("", [ToolCall("lookup", {"city": last.content})]))
    result = json.loads(str(last.content))
    if "error" in result:
        return response(message_assistant(f"Sorry, no forecast: {result['error']['code']}."))
    return response(message_assistant(f"{result['city']}: {result['forecast']}."))


def start_app(slot: LimiterSlot) -> tuple[pykka.ActorRef[Supervisor], Runtime]:
    """Start the application's supervisor (with the limiter) and the runtime beside it."""
    app = Supervisor.start([ChildSpec("rate-limiter", slot.start)], name="app")
    runtime = Runtime.start()
    runtime.register_agent("weather", lambda: new_agent_options(model, tools=[lookup_tool(slot)]))
    return app, runtime


def main() -> None:
    """Serve runs, crash the limiter, and show the runtime serving through the restart."""
    slot = LimiterSlot(capacity=3)
    app, runtime = start_app(slot)
    try:
        session = runtime.session("user-1", "weather")
        for city in ("Paris", "Oslo", "Rome", "Lima"):
            print(session.run(city).get(timeout=TIMEOUT).output)  # the fourth is rate limited

        current = slot.current()
        assert current is not None
        current.tell(Poison())
        print("limiter crashed:", slot.wait_started(2, TIMEOUT) and "restarted by its supervisor")
        # A fresh limiter has a full bucket again; the runtime kept every session.
        print(session.run("Kyiv").get(timeout=TIMEOUT).output)
        print(
            f"history: {len(session.history())} messages; runtime crashes: "
            f"{runtime.statistics().crashes}"
        )
    finally:
        runtime.stop()
        app.stop()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C: what main() started has stopped by now
        sys.exit(130)
