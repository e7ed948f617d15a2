"""The observer's views for people and its door, over real loopback HTTP: runs, timelines,
approvals, actions, the 15-minute series, paging, and the refusals that keep it safe."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from _observed import TIMEOUT, Observed
from _people import RECIPIENT, mailer

from praxo_actors.observer import ObserverServer
from praxo_actors.observer._series import Series
from praxo_actors.testing._eventually import eventually


def token_of(observed: Observed) -> str:
    """Return the token the served page embeds."""
    page = observed.client.get("/").text
    start = page.index('name="praxo-token" content="') + len('name="praxo-token" content="')
    return page[start : page.index('"', start)]


def post(observed: Observed, path: str, body: Any = None, **headers: str) -> httpx.Response:
    """POST as the page does: its Origin and token, unless ``headers`` say otherwise."""
    sent = {"origin": observed.server.url.rstrip("/"), "x-praxo-token": token_of(observed)}
    sent.update({k.replace("_", "-"): v for k, v in headers.items()})
    return observed.client.post(path, json=body or {}, headers=sent)


def test_recent_runs_and_a_runs_timeline(observed: Observed) -> None:
    """``/api/runs`` lists the newest runs first with their agent and status, filtered; one
    run's timeline is its events in order."""
    first = observed.run("r1")
    second = observed.run("r2")
    eventually(lambda: len(observed.client.get("/api/runs").json()["runs"]) == 2, what="two runs")
    runs = observed.client.get("/api/runs").json()["runs"]
    assert [r["run_id"] for r in runs] == [second.run_id, first.run_id]
    row = runs[0]
    assert set(row) == {
        "run_id",
        "session_id",
        "agent",
        "status",
        "started_at",
        "duration_ms",
        "error_code",
    }
    assert (row["session_id"], row["agent"], row["status"], row["error_code"]) == (
        "r2",
        "demo",
        "completed",
        None,
    )
    assert row["duration_ms"] >= 5.0  # the model sleeps 5 ms
    only = observed.client.get("/api/runs", params={"session": "r1"}).json()["runs"]
    assert [r["run_id"] for r in only] == [first.run_id]
    assert observed.client.get("/api/runs", params={"status": "failed"}).json()["runs"] == []
    assert len(observed.client.get("/api/runs", params={"agent": "demo"}).json()["runs"]) == 2
    assert observed.client.get("/api/runs", params={"agent": "x"}).json()["runs"] == []
    assert len(observed.client.get("/api/runs", params={"limit": 1}).json()["runs"]) == 1
    timeline = observed.client.get(f"/api/runs/{first.run_id}").json()
    assert timeline["run"]["run_id"] == first.run_id
    types = [e["type"] for e in timeline["events"]]
    assert types[0] == "run.started" and types[-1] == "run.completed" and len(types) == 8
    assert [e["seq"] for e in timeline["events"]] == list(range(8))


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/api/runs/run_nobody", 404, "OBSERVER_UNKNOWN_RUN"),
        ("/api/runs?status=asleep", 400, "RUNTIME_INVALID_INPUT"),
        ("/api/runs?limit=5000", 400, "RUNTIME_INVALID_INPUT"),
        ("/api/state?sort=colour", 400, "RUNTIME_INVALID_INPUT"),
        ("/api/state?offset=-3", 400, "RUNTIME_INVALID_INPUT"),
        ("/api/nothing", 404, "OBSERVER_NOT_FOUND"),
    ],
)
def test_bad_view_requests_have_a_status_and_code(
    observed: Observed, path: str, status: int, code: str
) -> None:
    """An unknown run, a bad filter or an unknown path is answered with a status and code."""
    reply = observed.client.get(path)
    assert reply.status_code == status
    assert reply.json()["error"]["code"] == code


def test_sessions_are_paged_and_numbers_sort_as_numbers(observed: Observed) -> None:
    """``sort=messages`` orders 4 before 12 (not as text); ``offset`` and ``limit`` page the
    sessions, and ``page.more`` says whether more follow."""
    for sid in ("a", "b", "c"):
        observed.run(sid)
    for _ in range(2):
        observed.run("a")  # "a" has 12 messages, the others 4
    rows = observed.state(sort="messages", desc="1")["sessions"]
    assert [(r["id"], r["messages"]) for r in rows] == [("a", 12), ("b", 4), ("c", 4)]
    rows = observed.state(sort="messages")["sessions"]
    assert [r["messages"] for r in rows] == [4, 4, 12]
    first = observed.state(limit=2, sort="id")
    assert [r["id"] for r in first["sessions"]] == ["a", "b"] and first["page"]["more"]
    second = observed.state(limit=2, offset=2, sort="id")
    assert [r["id"] for r in second["sessions"]] == ["c"] and not second["page"]["more"]
    unsorted = observed.state(limit=2, offset=2)
    assert len(unsorted["sessions"]) == 1 and not unsorted["page"]["more"]


def test_sessions_show_their_queue_and_memory_estimate(observed: Observed) -> None:
    """With ``memory=1`` each live session has ``memory_bytes`` (its messages' encoded size,
    growing with them) beside ``queued_runs``; a passivated one has None."""
    observed.run("big")
    observed.run("small")
    before = observed.state(memory="1", sort="id")["sessions"][0]["memory_bytes"]
    observed.run("big")
    rows = observed.state(memory="1", sort="id")["sessions"]
    assert [r["id"] for r in rows] == ["big", "small"]
    assert rows[0]["queued_runs"] == 0 and rows[0]["memory_bytes"] > before > 100
    assert observed.runtime.session("small", agent="demo").passivate()
    rows = observed.state(memory="1", sort="id")["sessions"]
    assert rows[1]["state"] == "passivated" and rows[1]["memory_bytes"] is None
    inspected = observed.client.get("/api/sessions/big").json()
    assert inspected["memory_bytes"] == rows[0]["memory_bytes"]


def test_pending_approvals_are_listed_redacted_and_answered(observed: Observed) -> None:
    """A run waiting for approval is listed with its arguments PII-redacted; a POST approves
    one run (the tool runs) and denies another (APPROVAL_DENIED), and both runs end."""
    sent: list[Any] = []
    observed.runtime.register_agent("mailer", mailer(sent))
    waiting = {}
    for sid in ("yes", "no"):
        result = observed.runtime.session(sid, agent="mailer").run("mail").get(timeout=TIMEOUT)
        assert result.status == "interrupted"
        waiting[sid] = result.run_id
    eventually(
        lambda: len(observed.client.get("/api/approvals").json()["approvals"]) == 2, what="2"
    )
    listed = {a["session_id"]: a for a in observed.client.get("/api/approvals").json()["approvals"]}
    assert listed["yes"]["tool"] == "send_mail" and listed["yes"]["agent"] == "mailer"
    assert listed["yes"]["arguments"] == {"to": "[REDACTED_EMAIL]"}
    assert listed["yes"]["arguments_redacted"] and listed["yes"]["run_id"] == waiting["yes"]
    answer = post(observed, "/api/approvals/yes", {"approved": True})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"session_id": "yes", "run_id": waiting["yes"], "approved": True}
    assert post(observed, "/api/approvals/no", {"approved": False}).status_code == 200
    assert_ended(observed, sent)
    assert observed.client.get("/api/approvals").json()["approvals"] == []
    again = post(observed, "/api/approvals/yes", {"approved": True})
    assert again.status_code == 409 and again.json()["error"]["code"] == "SESSION_NOT_INTERRUPTED"
    bad = post(observed, "/api/approvals/yes", {"approved": "maybe"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "RUNTIME_INVALID_INPUT"


def test_of_concurrent_answers_to_one_approval_only_the_one_that_took_effect_is_200(
    observed: Observed,
) -> None:
    """Of 50 concurrent approve and deny POSTs on one approval, one gets 200 and its decision is
    the one taken; the other 49 get 409 SESSION_NOT_INTERRUPTED."""
    sent: list[Any] = []
    observed.runtime.register_agent("mailer", mailer(sent))
    result = observed.runtime.session("once", agent="mailer").run("mail").get(timeout=TIMEOUT)
    assert result.status == "interrupted"
    headers = {"origin": observed.server.url.rstrip("/"), "x-praxo-token": token_of(observed)}

    async def answer_all() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=50)
        async with httpx.AsyncClient(
            base_url=observed.server.url, timeout=TIMEOUT, limits=limits
        ) as client:
            return await asyncio.gather(
                *(
                    client.post(
                        "/api/approvals/once", json={"approved": n % 2 == 0}, headers=headers
                    )
                    for n in range(50)
                )
            )

    replies = asyncio.run(answer_all())
    ok = [reply for reply in replies if reply.status_code == 200]
    refused = [reply for reply in replies if reply.status_code == 409]
    assert len(ok) == 1, [reply.text for reply in ok]
    assert len(refused) == 49
    assert {reply.json()["error"]["code"] for reply in refused} == {"SESSION_NOT_INTERRUPTED"}
    approved = ok[0].json()["approved"]
    handle = observed.runtime.session("once", agent="mailer")
    eventually(
        lambda: observed.client.get("/api/runs").json()["runs"][0]["status"] == "completed",
        what="the run ended",
    )
    assert sent == ([{"to": RECIPIENT}] if approved else [])
    assert ("APPROVAL_DENIED" in str(handle.history()[-1].content)) is not approved


def assert_ended(observed: Observed, sent: list[Any]) -> None:
    """Wait until the runs of "yes" and "no" completed; check that only "yes" mailed."""

    def statuses() -> dict[str, str]:
        runs = observed.client.get("/api/runs").json()["runs"]
        return {r["session_id"]: r["status"] for r in runs}

    eventually(
        lambda: statuses() == {"yes": "completed", "no": "completed"}, what="both runs ended"
    )
    yes = observed.runtime.session("yes", agent="mailer").history()[-1].content
    no = observed.runtime.session("no", agent="mailer").history()[-1].content
    assert yes == 'Done: "sent"' and sent == [{"to": RECIPIENT}]
    assert "APPROVAL_DENIED" in str(no)


def test_approval_arguments_are_shown_when_the_host_opts_in() -> None:
    """``show_arguments=True`` shows a pending approval's arguments as the model gave them."""
    from praxo_actors.runtime import Runtime

    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    server = None
    try:
        runtime.register_agent("mailer", mailer([]))
        runtime.session("s", agent="mailer").run("mail").get(timeout=TIMEOUT)
        server = ObserverServer(runtime, timeout=TIMEOUT, show_arguments=True)
        with httpx.Client(base_url=server.url, timeout=TIMEOUT) as client:
            (item,) = client.get("/api/approvals").json()["approvals"]
        assert item["arguments"] == {"to": RECIPIENT} and not item["arguments_redacted"]
    finally:
        runtime.stop()
        if server is not None:
            server.stop()


def test_stop_and_passivate_from_the_observer(observed: Observed) -> None:
    """POST ``/api/passivate/{id}`` passivates a live session, ``/api/stop/{id}`` stops one;
    each says False for a session that is not live."""
    observed.run("sleepy")
    observed.run("halted")
    reply = post(observed, "/api/passivate/sleepy")
    assert reply.status_code == 200 and reply.json() == {"session_id": "sleepy", "passivated": True}
    assert post(observed, "/api/stop/halted").json() == {"session_id": "halted", "stopped": True}
    states = {s["id"]: s["state"] for s in observed.state()["sessions"]}
    assert states == {"sleepy": "passivated", "halted": "passivated"}
    assert post(observed, "/api/stop/nobody").json() == {"session_id": "nobody", "stopped": False}


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({"origin": "http://evil.example"}, 403, "OBSERVER_ORIGIN_REFUSED"),
        ({"origin": ""}, 403, "OBSERVER_ORIGIN_REFUSED"),
        ({"x_praxo_token": ""}, 403, "OBSERVER_TOKEN_REFUSED"),
        ({"x_praxo_token": "guessed"}, 403, "OBSERVER_TOKEN_REFUSED"),
    ],
)
def test_an_action_without_the_pages_origin_and_token_is_refused(
    observed: Observed, headers: dict[str, str], status: int, code: str
) -> None:
    """A POST from another origin, or without the page's token, is refused and does nothing."""
    observed.run("kept")
    reply = post(observed, "/api/stop/kept", **headers)
    assert reply.status_code == status
    assert reply.json()["error"]["code"] == code
    assert observed.state()["sessions"][0]["state"] == "live"


def test_a_post_without_origin_header_is_refused(observed: Observed) -> None:
    """A POST with no Origin header at all is refused."""
    reply = observed.client.post("/api/stop/x", headers={"x-praxo-token": token_of(observed)})
    assert reply.status_code == 403 and reply.json()["error"]["code"] == "OBSERVER_ORIGIN_REFUSED"


@pytest.mark.parametrize("path", ["/api/stop/kept", "/api/passivate/kept", "/api/approvals/kept"])
def test_get_on_an_action_is_405(observed: Observed, path: str) -> None:
    """An action asked with GET is 405 and changes nothing."""
    observed.run("kept")
    reply = observed.client.get(path)
    assert reply.status_code == 405
    assert reply.json()["error"]["code"] == "OBSERVER_METHOD_NOT_ALLOWED"
    assert observed.state()["sessions"][0]["state"] == "live"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", ""])
def test_a_foreign_host_is_refused_on_every_endpoint(observed: Observed, host: str) -> None:
    """A Host that is not the one served on (DNS rebinding) is 421 on pages, views and
    actions alike."""
    name = host.format(port=observed.server.port)
    for path in ("/", "/api/state", "/api/runs", "/api/approvals", "/favicon.ico"):
        reply = observed.client.get(path, headers={"host": name})
        assert reply.status_code == 421, path
        assert reply.json()["error"]["code"] == "OBSERVER_HOST_REFUSED"
    reply = observed.client.post("/api/stop/x", headers={"host": name})
    assert reply.status_code == 421


def test_loopback_names_and_allowed_hosts_are_accepted(observed: Observed) -> None:
    """On a loopback bind ``localhost`` and ``127.0.0.1`` on its port are served."""
    port = observed.server.port
    for name in (f"localhost:{port}", f"127.0.0.1:{port}", f"LOCALHOST:{port}"):
        assert observed.client.get("/api/runs", headers={"host": name}).status_code == 200


def test_allowed_hosts_replace_the_default() -> None:
    """``allowed_hosts`` names the hosts served: others, loopback included, are refused."""
    from praxo_actors.runtime import Runtime

    runtime = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
    server = None
    try:
        server = ObserverServer(runtime, timeout=TIMEOUT, allowed_hosts=["observer.internal"])
        with httpx.Client(base_url=server.url, timeout=TIMEOUT) as client:
            ok = client.get("/api/runs", headers={"host": "observer.internal:8080"})
            refused = client.get("/api/runs")
        assert ok.status_code == 200 and refused.status_code == 421
    finally:
        runtime.stop()
        if server is not None:
            server.stop()


def test_the_favicon_is_served(observed: Observed) -> None:
    """``/favicon.ico`` (what browsers ask for) and ``/favicon.svg`` are an SVG icon."""
    for path in ("/favicon.ico", "/favicon.svg"):
        reply = observed.client.get(path)
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("image/svg+xml")
        assert reply.text.startswith("<svg")


def test_each_app_has_its_own_token(observed: Observed) -> None:
    """The page's token is random per app: another app's token is refused here."""
    from praxo_actors.observer import observer_app

    other = observer_app(observed.runtime).state.token
    mine = token_of(observed)
    assert len(mine) >= 32 and other != mine
    reply = post(observed, "/api/stop/x", x_praxo_token=other)
    assert reply.status_code == 403


def test_the_series_counts_runs_failures_and_latency_per_step() -> None:
    """Ended runs land in their 10-second step as rates, with p50/p99 and the live sample;
    steps older than 15 minutes are gone."""
    series = Series()
    now = 10_009.0  # 5 s and 1 s before it are in its step (10,000-10,010)
    for ms in (10.0, 20.0, 30.0, 40.0):
        series.ended(int((now - 5) * 1e9), False, ms)
    series.ended(int((now - 5) * 1e9), True, 1000.0)
    series.ended(int((now - 2000) * 1e9), True, 5.0)  # too old to be shown
    series.sample_live(7, at_s=now - 1)
    answer = series.points(now_s=now)
    assert answer["step_s"] == 10 and len(answer["points"]) == 90
    point = answer["points"][-1]
    assert point["runs_per_s"] == 0.5 and point["failures_per_s"] == 0.1
    assert (point["p50"], point["p99"], point["live_sessions"]) == (30.0, 1000.0, 7)
    assert sum(p["failures_per_s"] for p in answer["points"]) == 0.1
    assert answer["points"][0]["p50"] is None and answer["points"][0]["live_sessions"] is None


def test_the_series_endpoint_shows_runs_that_ended(observed: Observed) -> None:
    """``/api/series`` counts the runs the runtime ran in the current step."""
    observed.run("s1")
    observed.run("s2")

    def counted() -> float:
        points = observed.client.get("/api/series").json()["points"]
        return float(sum(p["runs_per_s"] for p in points))

    eventually(lambda: counted() == 0.2, what="two runs in the series")
