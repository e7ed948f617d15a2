"""The observer lists the runtime's schedules (next fire, last outcome) and cancels one."""

from __future__ import annotations

from _observed import Observed
from test_observer_views import post


def test_schedules_are_listed_and_one_is_cancelled(observed: Observed) -> None:
    """``/api/schedules`` lists each schedule with its next fire; POST ``.../cancel`` removes
    it (then 404 ``SCHEDULE_NOT_FOUND``); ``session`` filters the list."""
    runtime = observed.runtime
    daily = runtime.session("a", agent="demo").schedule("digest", cron="0 9 * * *", key="d")
    runtime.session("b", agent="demo").schedule("check", every=3600)
    rows = observed.client.get("/api/schedules").json()["schedules"]
    assert sorted(row["session_id"] for row in rows) == ["a", "b"]
    (row,) = observed.client.get("/api/schedules", params={"session": "a"}).json()["schedules"]
    assert row["id"] == daily.id and row["kind"] == "cron" and row["key"] == "d"
    assert row["next_fire"] == daily.next_fire.isoformat() and row["last_outcome"] is None
    reply = post(observed, f"/api/schedules/{daily.id}/cancel")
    assert reply.json() == {"schedule_id": daily.id, "cancelled": True}
    assert [s.session_id for s in runtime.schedules()] == ["b"]
    again = post(observed, f"/api/schedules/{daily.id}/cancel")
    assert again.status_code == 404 and again.json()["error"]["code"] == "SCHEDULE_NOT_FOUND"


def test_cancelling_needs_the_pages_token(observed: Observed) -> None:
    """A cancel without the page's token is refused and cancels nothing."""
    schedule = observed.runtime.session("a", agent="demo").schedule("x", every=60)
    reply = observed.client.post(f"/api/schedules/{schedule.id}/cancel")
    assert reply.status_code in (403, 421)
    assert [s.id for s in observed.runtime.schedules()] == [schedule.id]
