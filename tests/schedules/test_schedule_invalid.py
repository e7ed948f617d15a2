"""Bad arguments to ``schedule`` fail SCHEDULE_INVALID before anything is stored; a fire
that is refused publishes ``schedule.failed`` with the refusal's code."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any

import pytest
from _schedule_helpers import TIMEOUT, Fires

from praxo_actors import PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.testing import ManualClock

Start = Callable[..., tuple[Runtime, Fires]]

_BAD: list[tuple[str, dict[str, Any]]] = [
    ("none given", {}),
    ("two given", {"after": 1, "every": 1}),
    ("negative after", {"after": -1}),
    ("nan after", {"after": float("nan")}),
    ("bool after", {"after": True}),
    ("str after", {"after": "1"}),
    ("zero every", {"every": 0}),
    ("zero timedelta every", {"every": dt.timedelta()}),
    ("naive at", {"at": dt.datetime(2030, 1, 1)}),
    ("at not a datetime", {"at": "2030-01-01"}),
    ("bad cron", {"cron": "every day"}),
    ("cron out of range", {"cron": "61 * * * *"}),
    ("cron not a str", {"cron": 5}),
    ("unknown zone", {"cron": "0 9 * * *", "tz": "Mars/Olympus"}),
    ("tz without cron", {"every": 60, "tz": "UTC"}),
    ("bad catch_up", {"every": 60, "catch_up": "some"}),
    ("empty key", {"every": 60, "key": ""}),
    ("key not a str", {"every": 60, "key": 3}),
]


@pytest.mark.parametrize(("why", "kwargs"), _BAD, ids=[why for why, _ in _BAD])
def test_bad_arguments_are_schedule_invalid(
    runtime: Start, clock: ManualClock, why: str, kwargs: dict[str, Any]
) -> None:
    """Each bad argument fails SCHEDULE_INVALID and stores nothing."""
    rt, _ = runtime(clock=clock)
    with pytest.raises(PraxoError) as info:
        rt.session("s").schedule("x", **kwargs)
    assert info.value.code == "SCHEDULE_INVALID", why
    assert rt.schedules() == []


def test_input_must_be_text(runtime: Start, clock: ManualClock) -> None:
    """A non-str input is SCHEDULE_INVALID."""
    rt, _ = runtime(clock=clock)
    with pytest.raises(PraxoError) as info:
        rt.session("s").schedule(b"x", after=1)  # type: ignore[arg-type]
    assert info.value.code == "SCHEDULE_INVALID"


def test_a_refused_fire_publishes_schedule_failed(runtime: Start, clock: ManualClock) -> None:
    """With ``on_busy="reject"``, a fire while the session runs is refused SESSION_BUSY:
    ``schedule.failed`` says so, after the ``schedule.fired`` of the same run."""
    gate = threading.Event()
    entered = threading.Event()

    def model(request: Request) -> Response:
        entered.set()
        gate.wait(TIMEOUT)
        return Response(message_assistant("done"))

    rt, fires = runtime(clock=clock, on_busy="reject", register=False)
    rt.register_agent("default", lambda: new_agent_options(model))
    handle = rt.session("s")
    busy = handle.run("hold")
    try:
        assert entered.wait(TIMEOUT)
        handle.schedule("ping", every=60)
        clock.advance(60)
        (failed,) = fires.wait(1, "schedule.failed")
        assert failed.data["code"] == "SESSION_BUSY"
        assert failed.run_id == fires.of()[0].run_id
    finally:
        gate.set()
    busy.get(timeout=TIMEOUT)
