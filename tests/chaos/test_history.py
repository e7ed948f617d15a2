"""The history checker on hand-made histories: it passes good ones and names each violation."""

from __future__ import annotations

import threading

import pytest
from _history import History, Logged, Run, Violation, check, describe, logged_runs

from praxo_actors import AgentError, PraxoError
from praxo_actors.models import (
    Message,
    RunResult,
    Session,
    ToolCall,
    message_assistant,
    message_tool,
    message_user,
)


def log(*runs: str) -> list[Message]:
    """The messages of runs of the echo agent: input ``x`` answered ``x!``."""
    return [m for x in runs for m in (message_user(x), message_assistant(f"{x}!"))]


def ok(session_id: str, input: str, version: int, output: str | None = None) -> Run:
    return Run(session_id, input, output if output is not None else f"{input}!", version)


def failed(session_id: str, input: str, error: BaseException) -> Run:
    return Run(session_id, input, error=error)


def kinds(violations: list[Violation]) -> list[str]:
    return [v.kind for v in violations]


def test_a_good_history_has_no_violation() -> None:
    """Acknowledged runs logged once each, in order, with their outputs; failures with codes."""
    history = {
        "a": [
            ok("a", "a1", 1),
            failed("a", "a2", AgentError("SESSION_CRASHED", "host died")),
            ok("a", "a3", 2),
            failed("a", "a4", PraxoError("STORE_FAILED")),
        ],
        "b": [ok("b", "b1", 1), ok("b", "b2", 2)],
        "c": [failed("c", "c1", PraxoError("SESSION_CRASHED"))],
    }
    assert check(history, {"a": log("a1", "a3"), "b": log("b1", "b2")}) == []


def test_a_failed_run_may_be_logged_once() -> None:
    """A run that failed for its caller after its commit (its host died) may be in the log."""
    history = {"a": [failed("a", "a1", AgentError("SESSION_CRASHED")), ok("a", "a2", 2)]}
    assert check(history, {"a": log("a1", "a2")}) == []


def test_a_lost_acknowledged_run_is_caught() -> None:
    """An acknowledged run missing from the log."""
    history = {"a": [ok("a", "a1", 1), ok("a", "a2", 2)]}
    violations = check(history, {"a": log("a1")})
    assert kinds(violations) == ["lost"]
    assert violations[0].session_id == "a" and "'a2'" in violations[0].detail


def test_a_session_with_no_log_loses_its_runs() -> None:
    """A session missing from the logs has an empty log."""
    assert kinds(check({"a": [ok("a", "a1", 1)]}, {})) == ["lost"]


def test_a_duplicated_run_is_caught() -> None:
    """A run in the log twice, acknowledged or not."""
    history = {"a": [ok("a", "a1", 1), failed("a", "a2", PraxoError("SESSION_CRASHED"))]}
    assert kinds(check(history, {"a": log("a1", "a1")})) == ["duplicated"]
    assert kinds(check(history, {"a": log("a1", "a2", "a2")})) == ["duplicated"]


def test_runs_out_of_submission_order_are_caught() -> None:
    """Acknowledged runs logged in another order than submitted."""
    history = {"a": [ok("a", "a1", 2), ok("a", "a2", 1)]}
    assert kinds(check(history, {"a": log("a2", "a1")})) == ["out_of_order"]


def test_a_wrong_output_is_caught() -> None:
    """The caller got another output than the log holds."""
    history = {"a": [ok("a", "a1", 1, output="something else")]}
    violations = check(history, {"a": log("a1")})
    assert kinds(violations) == ["wrong_output"]
    assert "'something else'" in violations[0].detail and "'a1!'" in violations[0].detail


def test_a_version_committed_twice_is_caught() -> None:
    """Two acknowledged runs that both report the version they committed as 1."""
    history = {"a": [ok("a", "a1", 1), ok("a", "a2", 1)]}
    assert kinds(check(history, {"a": log("a1", "a2")})) == [
        "version_twice",
        "version_misplaced",
    ]


def test_an_overwritten_commit_is_caught() -> None:
    """A second writer's run took the first's version: the first is lost, the second
    misplaced against what its result reported."""
    history = {"a": [ok("a", "a1", 1), ok("a", "a2", 1)]}
    assert sorted(kinds(check(history, {"a": log("a2")}))) == [
        "lost",
        "version_twice",
    ]


def test_a_version_at_the_wrong_place_is_caught() -> None:
    """A run whose result reported another version than where the log holds it."""
    history = {"a": [ok("a", "a1", 1), ok("a", "a2", 3)]}
    assert kinds(check(history, {"a": log("a1", "a2")})) == ["version_misplaced"]


def test_a_raw_exception_is_caught() -> None:
    """A failure that is not a PraxoError, or whose code is not a str."""
    odd = PraxoError("X")
    odd.code = None  # type: ignore[assignment]
    history = {
        "a": [
            failed("a", "a1", RuntimeError("boom")),
            failed("a", "a2", odd),
            failed("a", "a3", TimeoutError()),
        ]
    }
    violations = check(history, {"a": []})
    assert kinds(violations) == ["uncoded"] * 3
    assert "RuntimeError: boom" in violations[0].detail


def test_an_unsettled_run_is_caught() -> None:
    """A run that never ended for its caller."""
    assert kinds(check({"a": [Run("a", "a1")]}, {"a": []})) == ["unsettled"]


def test_an_unknown_logged_run_is_caught() -> None:
    """A run in a log that no caller submitted."""
    history = {"a": [ok("a", "a1", 1)]}
    assert kinds(check(history, {"a": log("a1", "zz"), "b": log("b1")})) == [
        "unknown",
        "unknown",
    ]


def test_inputs_must_tell_runs_apart() -> None:
    """A history with one input twice cannot be checked."""
    with pytest.raises(ValueError, match="more than once"):
        check({"a": [ok("a", "x", 1)], "b": [ok("b", "x", 1)]}, {})


def test_logged_runs_split_at_user_messages() -> None:
    """A run with a tool call is one run whose output is its last assistant message."""
    messages = [
        message_user("job"),
        message_assistant("", [ToolCall("work", {"text": "job"}, "c1")]),
        message_tool("c1", "work", '"job"'),
        message_assistant('done: "job"'),
        message_user("next"),
    ]
    assert logged_runs(messages) == [Logged("job", 'done: "job"'), Logged("next", "")]


def test_a_recorded_history_checks_like_a_hand_made_one() -> None:
    """History records runs from threads; a result's session gives the version it reports."""
    history = History()
    threads = [
        threading.Thread(target=lambda s=s: history.submitted(s, f"{s}1")) for s in ("a", "b")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    [first] = history.sessions["a"]
    session = Session("a", log("a1"))
    first.acknowledge(RunResult("r1", session, "a1!", None, 1, 1, 0))
    assert first.version == 1 and first.output == "a1!"
    history.sessions["b"][0].fail(PraxoError("STORE_FAILED"))
    assert len(history.runs()) == 2
    assert check(history, {"a": log("a1")}) == []
    assert kinds(check(history, {"a": []})) == ["lost"]


def test_a_kept_result_reports_its_own_version() -> None:
    """A result read back later carries the session as it is now: the run's version is where
    its input is, and a session without the run reports version 0 (caught as misplaced)."""
    later = Run("a", "a1")
    later.acknowledge(RunResult("r1", Session("a", log("a1", "a2", "a3")), "a1!"))
    assert later.version == 1
    assert check({"a": [later, ok("a", "a2", 2)]}, {"a": log("a1", "a2")}) == []
    stray = Run("a", "a9")
    stray.acknowledge(RunResult("r9", Session("a", log("a1")), "a9!"))
    assert stray.version == 0
    assert kinds(check({"a": [stray]}, {"a": log("a9")})) == ["version_misplaced"]


def test_describe_shows_a_session_side_by_side() -> None:
    """The report of a session names each run's outcome and the log's versions."""
    history = History()
    first = history.submitted("a", "a1")
    first.acknowledge(RunResult("r1", Session("a", log("a1")), "a1!"))
    history.submitted("a", "a2").fail(PraxoError("SESSION_CRASHED"))
    text = describe(history, {"a": log("a1")}, "a")
    assert "'a1' -> ok v1 'a1!'" in text
    assert "'a2' -> failed 'SESSION_CRASHED'" in text
    assert text.endswith("log: v1 'a1'")
