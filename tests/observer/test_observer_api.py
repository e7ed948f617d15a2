"""The observer's HTTP API over real loopback HTTP: /api/state, one session, the SSE stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from _observed import EMAIL, TIMEOUT, Observed, demo_agent

from praxo_actors import PraxoError
from praxo_actors.observer import observer_app
from praxo_actors.runtime import Runtime
from praxo_actors.testing._eventually import eventually


def wait_for(condition: Any, what: str) -> None:
    """Wait (bounded by TIMEOUT) until ``condition()`` holds (the other observer tests' wait)."""
    eventually(condition, timeout=TIMEOUT, what=what)


def test_state_reports_sessions_tree_statistics_and_latency(observed: Observed) -> None:
    """After three sessions ran, the state has them live, in the tree, counted and timed."""
    ids = ["alpha", "beta", "gamma"]
    for sid in ids:
        assert observed.run(sid).output == "The product is 42."
    eventually(lambda: observed.state()["latency_ms"]["count"] == 3, what="three runs measured")
    state = observed.state()
    assert set(state) == {
        "live_sessions",
        "sessions",
        "page",
        "tree",
        "statistics",
        "latency_ms",
        "observer",
    }
    assert state["live_sessions"] == 3
    assert [s["id"] for s in state["sessions"]] == ids
    for info in state["sessions"]:
        assert info["state"] == "live" and info["agent"] == "demo"
        assert info["messages"] == 4  # user, the tool call, the tool result, the answer
    stats = state["statistics"]
    assert (stats["runs_completed"], stats["runs_failed"], stats["activations"]) == (3, 0, 3)
    tree = state["tree"]
    assert tree["id"] == "praxo-runtime" and tree["alive"]
    assert [c["id"] for c in tree["children"]] == ["events", "store", "sessions"]
    sessions = tree["children"][2]
    assert sessions["type"] == "supervisor" and sessions["counts"]["active"] == 3
    assert [c["id"] for c in sessions["children"]] == ids
    assert {c["actor"] for c in sessions["children"]} == {"SessionActor"}
    latency = state["latency_ms"]
    assert latency["p50"] >= 5.0 and latency["p99"] >= latency["p50"]  # the model sleeps 5 ms
    assert sum(n for _, n in latency["buckets"]) == 3


def test_passivated_sessions_are_listed_from_the_store(observed: Observed) -> None:
    """A passivated session is listed with its state, and ``state=`` filters the list."""
    observed.run("kept")
    observed.run("asleep")
    assert observed.runtime.session("asleep", agent="demo").passivate()
    states = {s["id"]: s["state"] for s in observed.state()["sessions"]}
    assert states == {"kept": "live", "asleep": "passivated"}
    assert observed.state()["live_sessions"] == 1
    passivated = observed.state(state="passivated")["sessions"]
    assert [(s["id"], s["messages"]) for s in passivated] == [("asleep", 4)]
    assert [s["id"] for s in observed.state(limit=1)["sessions"]] == ["kept"]


def test_one_session_is_inspected(observed: Observed) -> None:
    """``/api/sessions/{id}`` is runtime.inspect of that session, unknown ones included."""
    observed.run("one")
    info = observed.client.get("/api/sessions/one").json()
    assert (info["id"], info["state"], info["messages"]) == ("one", "live", 4)
    assert observed.client.get("/api/sessions/nobody").json()["state"] == "unknown"


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/api/state?limit=many", "RUNTIME_INVALID_INPUT"),
        ("/api/state?limit=-1", "RUNTIME_INVALID_INPUT"),
        ("/api/state?state=asleep", "RUNTIME_INVALID_INPUT"),
        ("/api/events?pattern=", "EVENTS_INVALID_SUBSCRIPTION"),
    ],
)
def test_bad_input_is_a_400_with_a_code(observed: Observed, path: str, code: str) -> None:
    """Bad query parameters are answered 400 with the error's code."""
    reply = observed.client.get(path)
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == code


def sse(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """Yield the server-sent events of ``lines`` as ``{"event", "data"}`` (comments skipped)."""
    kind, data = "message", ""
    for line in lines:
        if line.startswith(":"):
            yield {"event": "comment", "data": line}
        elif line.startswith("event: "):
            kind = line.removeprefix("event: ")
        elif line.startswith("data: "):
            data = line.removeprefix("data: ")
        elif line == "" and data:
            yield {"event": kind, "data": json.loads(data)}
            kind, data = "message", ""


def test_events_stream_live_redacted_and_end_when_the_runtime_stops(observed: Observed) -> None:
    """The SSE stream carries a run's events in order, PII-redacted, and ends at stop."""
    with observed.client.stream("GET", "/api/events", params={"pattern": "*"}) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        events = sse(reply.iter_lines())
        assert next(events)["event"] == "comment"  # subscribed: the stream has begun
        result = observed.run("streamed", f"multiply for {EMAIL}")
        seen = []
        for item in events:
            seen.append(item["data"])
            if item["data"]["type"] == "run.completed":
                break
        assert [e["type"] for e in seen] == [
            "run.started",
            "model.requested",
            "model.responded",
            "tool.started",
            "tool.completed",
            "model.requested",
            "model.responded",
            "run.completed",
        ]
        assert {e["run_id"] for e in seen} == {result.run_id}
        assert [e["seq"] for e in seen] == list(range(8))
        assert seen[0]["data"]["input"] == "multiply for [REDACTED_EMAIL]"
        observed.runtime.stop()
        assert [item["event"] for item in events] == ["end"]


def test_state_after_the_runtime_stopped_is_a_503(observed: Observed) -> None:
    """Once the runtime has stopped, /api/state says RUNTIME_STOPPED with status 503."""
    observed.runtime.stop()
    reply = observed.client.get("/api/state")
    assert reply.status_code == 503
    assert reply.json()["error"]["code"] == "RUNTIME_STOPPED"


def test_the_page_and_its_script_are_served(observed: Observed) -> None:
    """``/`` is the HTML page and ``/observer.js`` its script, with relative API paths."""
    page = observed.client.get("/")
    assert page.headers["content-type"].startswith("text/html")
    assert 'id="live-sessions"' in page.text and 'src="observer.js"' in page.text
    script = observed.client.get("/observer.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert "api/state?" in script.text and 'EventSource("api/events' in script.text


def test_the_app_runs_on_the_runtimes_own_loop() -> None:
    """Mounted on the loop of ``Runtime.open``, the app answers without a blocking call."""

    async def main() -> dict[str, Any]:
        async with Runtime.open(idle_timeout=None) as runtime:
            runtime.register_agent("demo", demo_agent)
            await runtime.session("s", agent="demo").run("go")
            transport = httpx.ASGITransport(app=observer_app(runtime))
            async with httpx.AsyncClient(transport=transport, base_url="http://observer") as c:
                reply = await asyncio.wait_for(c.get("/api/state"), TIMEOUT)
                assert reply.status_code == 200, reply.text
                one = await asyncio.wait_for(c.get("/api/sessions/s"), TIMEOUT)
                assert one.json()["state"] == "live"
                body: dict[str, Any] = reply.json()
                return body

    state = asyncio.run(main())
    assert state["live_sessions"] == 1 and state["statistics"]["runs_completed"] == 1


def test_observer_app_refuses_what_is_not_a_runtime() -> None:
    """``observer_app`` of anything but a Runtime is RUNTIME_INVALID_INPUT."""
    with pytest.raises(PraxoError) as info:
        observer_app(object())  # type: ignore[arg-type]
    assert info.value.code == "RUNTIME_INVALID_INPUT"


def test_observer_app_of_a_stopped_runtime_is_refused() -> None:
    """A stopped runtime has nothing to observe: RUNTIME_STOPPED."""
    runtime = Runtime.start()
    runtime.stop()
    with pytest.raises(PraxoError) as info:
        observer_app(runtime)
    assert info.value.code == "RUNTIME_STOPPED"
