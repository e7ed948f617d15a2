"""Crash, restart and progress reports in the log records, with the ids bound."""

from __future__ import annotations

import pytest
from _helpers import captured_logs
from _supervision_helpers import Starter, call, capture, crash_child

from supervisors import Supervisor


def test_crash_and_restart_are_reported(caplog: pytest.LogCaptureFixture) -> None:
    """A crash gives child_crashed (error) and its restart child_restarted (info), with ids."""
    child = Starter("child1")
    with captured_logs(caplog, "supervisors") as logs:
        sup = Supervisor.start([child.spec()], name="reports")
        crash_child(sup, child.current)
    [crashed] = capture(logs, "child_crashed")
    assert crashed["log_level"] == "error"
    assert (crashed["supervisor"], crashed["child_id"]) == ("reports", "child1")
    assert "child1 crashed" in crashed["error"]
    [restarted] = capture(logs, "child_restarted")
    assert restarted["log_level"] == "info"
    assert restarted["ref"] == str(child.current)
    started = [e["child_id"] for e in capture(logs, "child_started")]
    assert started == ["child1", "child1"]


def test_normal_exit_is_reported_as_info(caplog: pytest.LogCaptureFixture) -> None:
    """A child that stops normally gives child_exited, not a crash report."""
    child = Starter("child1")
    with captured_logs(caplog, "supervisors") as logs:
        sup = Supervisor.start([child.spec(restart="transient")], name="reports")
        assert child.current.stop(timeout=5) is True
        call(sup, "count_children")
    assert capture(logs, "child_crashed") == []
    [exited] = capture(logs, "child_exited")
    assert (exited["log_level"], exited["child_id"], exited["restart"]) == (
        "info",
        "child1",
        "transient",
    )


def test_unnamed_supervisor_reports_its_ref(caplog: pytest.LogCaptureFixture) -> None:
    """Without a name, reports carry the supervisor's actor ref."""
    child = Starter("child1")
    with captured_logs(caplog, "supervisors") as logs:
        sup = Supervisor.start([child.spec()])
    assert capture(logs, "child_started")[0]["supervisor"] == str(sup)
