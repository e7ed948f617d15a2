"""A durable run whose pending state another writer replaced (a host that took the session
over) fails SESSION_CONFLICT at its next journal write, and leaves the log to that writer."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from _runtime_helpers import TIMEOUT, error_code

from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._log import PENDING, PendingRun
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime

Start = Callable[..., Runtime]


def test_a_run_whose_pending_state_was_taken_fails_session_conflict(runtime: Start) -> None:
    """While the run is in its tool, another writer's run takes the session's pending slot:
    the tool's journal write is skipped, the run fails SESSION_CONFLICT, the slot is kept."""
    store = InMemoryStore()
    inside = threading.Event()
    other = PendingRun("run-other", "default", "theirs", entries=1)

    def model(request: Request) -> Response:
        if request.messages[-1].role == "user":
            return Response(message_assistant("", [ToolCall("work", {}, id="c1")]))
        return Response(message_assistant("done"))

    def work(_args: dict[str, Any]) -> str:
        # As a host that took the session over and began a run of its own would.
        store.put(PENDING, "s", {**_builtins(other)})
        inside.set()
        return "worked"

    rt = runtime(store=store)
    rt.register_agent(
        "default",
        lambda: new_agent_options(model, tools=[Tool("work", "", {}, work)]),
        durable=True,
    )
    future = rt.session("s").run("go")
    assert error_code(future, TIMEOUT) == "SESSION_CONFLICT"
    assert inside.is_set()
    kept = store.get(PENDING, "s")
    assert kept is not None and kept.value["run_id"] == "run-other"


def _builtins(pending: PendingRun) -> dict[str, Any]:
    import msgspec

    value: dict[str, Any] = msgspec.to_builtins(pending)
    return value
