"""The observer's stop ends what it stops: the run in flight is cancelled and shown failed."""

from __future__ import annotations

import asyncio
import threading

import pytest
from _observed import TIMEOUT, Observed
from test_observer_views import post

from praxo_actors import PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.testing._eventually import eventually


class Hanging:
    """An async model that waits for an event nobody sets, and records its cancellation."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.cancelled = threading.Event()

    async def __call__(self, request: Request) -> Response:
        self.entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return Response(message_assistant("never"))


def test_the_observers_stop_cancels_the_run_in_flight(observed: Observed) -> None:
    """POST ``/api/stop/{id}`` cancels the async model in flight; the run fails
    AGENT_CANCELLED and ``/api/runs`` shows it failed, not running."""
    model = Hanging()
    observed.runtime.register_agent("hang", lambda: new_agent_options(model))
    future = observed.runtime.session("h", agent="hang").run("x")
    assert model.entered.wait(TIMEOUT)

    def runs() -> list[dict[str, object]]:
        reply = observed.client.get("/api/runs", params={"session": "h"})
        rows: list[dict[str, object]] = reply.json()["runs"]
        return rows

    eventually(lambda: [r["status"] for r in runs()] == ["running"], what="the run shown running")
    assert post(observed, "/api/stop/h").json() == {"session_id": "h", "stopped": True}
    with pytest.raises(PraxoError) as info:
        future.get(timeout=TIMEOUT)
    assert info.value.code == "AGENT_CANCELLED"
    assert model.cancelled.wait(TIMEOUT)
    eventually(lambda: [r["status"] for r in runs()] == ["failed"], what="the run shown failed")
    assert runs()[0]["error_code"] == "AGENT_CANCELLED"
