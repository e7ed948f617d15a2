"""Timeouts and deadlines: a value the clock cannot hold is refused with a code, and a run's
future that times out says so with ``RUNTIME_TIMEOUT``."""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable
from typing import Any

import pykka
import pytest
from _runtime_helpers import TIMEOUT, echo_agent

from praxo_actors import PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.runtime import Runtime

Start = Callable[..., Runtime]
BAD = [1e308, math.inf, -math.inf, math.nan, -1.0, 1e12]


def _entries(rt: Runtime, done_id: str) -> dict[str, Callable[[float], Any]]:
    """Every public entry that takes a timeout or a deadline, given the value to pass."""
    handle = rt.session("s")
    other = rt.session("t")
    return {
        "Runtime.inspect": lambda v: rt.inspect("s", timeout=v),
        "Runtime.sessions": lambda v: rt.sessions(timeout=v),
        "Runtime.ainspect": lambda v: asyncio.run(rt.ainspect("s", timeout=v)),
        "Runtime.asessions": lambda v: asyncio.run(rt.asessions(timeout=v)),
        "run": lambda v: handle.run("x", deadline=v),
        "arun": lambda v: asyncio.run(handle.arun("x", deadline=v)),
        "submit": lambda v: handle.submit("x", deadline=v),
        "asubmit": lambda v: asyncio.run(handle.asubmit("x", deadline=v)),
        "resume(deadline)": lambda v: handle.resume(True, deadline=v),
        "resume(timeout)": lambda v: handle.resume(True, timeout=v),
        "aresume": lambda v: asyncio.run(handle.aresume(True, deadline=v)),
        "history": lambda v: handle.history(timeout=v),
        "ahistory": lambda v: asyncio.run(handle.ahistory(timeout=v)),
        "result": lambda v: handle.result(done_id, timeout=v),
        "aresult": lambda v: asyncio.run(handle.aresult(done_id, timeout=v)),
        "stop": lambda v: other.stop(timeout=v),
        "astop": lambda v: asyncio.run(other.astop(timeout=v)),
        "passivate": lambda v: other.passivate(timeout=v),
        "apassivate": lambda v: asyncio.run(other.apassivate(timeout=v)),
        "RunFuture.get": lambda v: handle.run("x").get(timeout=v),
        "Subscription.wait_idle": lambda v: rt.events.subscribe(lambda _e: None).wait_idle(v),
    }


def test_a_wait_the_clock_cannot_hold_is_refused_everywhere(runtime: Start) -> None:
    """Every entry taking a timeout or a deadline refuses one that is infinite, NaN, negative
    or too large for the clock with RUNTIME_INVALID_INPUT, never OverflowError."""
    rt = runtime(agents={"default": echo_agent})
    done = rt.session("s").run("first")
    done.get(timeout=TIMEOUT)
    outcomes = {}
    for name, call in _entries(rt, done.run_id).items():
        for value in BAD:
            try:
                call(value)
                outcomes[name, value] = "accepted"
            except PraxoError as exc:
                outcomes[name, value] = exc.code
            except Exception as exc:
                outcomes[name, value] = type(exc).__name__
    wrong = {key: got for key, got in outcomes.items() if got != "RUNTIME_INVALID_INPUT"}
    assert wrong == {}


def test_a_run_future_that_times_out_is_runtime_timeout(runtime: Start) -> None:
    """``RunFuture.get(timeout)`` on a run still going raises PraxoError RUNTIME_TIMEOUT, still
    catchable as ``pykka.Timeout``; the run goes on and its future then answers."""
    release = threading.Event()

    def slow(_request: Request) -> Response:
        release.wait(TIMEOUT)
        return Response(message_assistant("late"))

    rt = runtime(agents={"default": lambda: new_agent_options(slow)})
    future = rt.session("s").run("x")
    try:
        with pytest.raises(PraxoError) as info:
            future.get(timeout=0)
        assert info.value.code == "RUNTIME_TIMEOUT"
        assert isinstance(info.value, pykka.Timeout)
        with pytest.raises(pykka.Timeout):
            future.get(timeout=0)
    finally:
        release.set()
    assert future.get(timeout=TIMEOUT).output == "late"


def test_a_run_whose_own_error_is_a_timeout_raises_it_unchanged(runtime: Start) -> None:
    """A callback's own ``pykka.Timeout`` reaches the caller as itself, not as a coded one."""

    def raises(_request: Request) -> Response:
        raise pykka.Timeout("the callback's own")

    rt = runtime(agents={"default": lambda: new_agent_options(raises)})
    with pytest.raises(pykka.Timeout) as info:
        rt.session("s").run("x").get(timeout=TIMEOUT)
    assert not isinstance(info.value, PraxoError)
    assert str(info.value) == "the callback's own"


@pytest.mark.parametrize("name", ["timeout", "idle_timeout", "subscriber_timeout"])
@pytest.mark.parametrize("value", [1e308, math.inf, math.nan])
def test_a_setting_the_clock_cannot_hold_is_refused(
    runtime: Start, name: str, value: float
) -> None:
    """A runtime's timeout setting too large for the clock is RUNTIME_INVALID_CONFIG at start."""
    with pytest.raises(PraxoError) as info:
        runtime(**{name: value})
    assert info.value.code == "RUNTIME_INVALID_CONFIG"
