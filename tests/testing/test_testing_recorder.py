"""The event recorder keeps events in order and lets a test wait for one."""

from __future__ import annotations

import threading

import pytest

from praxo_actors.models import Event
from praxo_actors.testing import EventRecorder


def event(type: str, seq: int = 0) -> Event:
    return Event(type=type, run_id="r", session_id="s", seq=seq, time_ns=0)


def test_recorder_keeps_events_and_types_in_order() -> None:
    """Called as a sink, it records each event; ``types()`` lists their types."""
    recorder = EventRecorder()
    recorder(event("run.started", 0))
    recorder(event("run.completed", 1))
    assert recorder.types() == ["run.started", "run.completed"]
    assert [e.seq for e in recorder.events] == [0, 1]


def test_events_is_a_snapshot() -> None:
    """Mutating the returned list does not change the record; ``clear`` does."""
    recorder = EventRecorder()
    recorder(event("a"))
    recorder.events.clear()
    assert recorder.types() == ["a"]
    recorder.clear()
    assert recorder.types() == []


def test_wait_for_returns_an_already_recorded_event() -> None:
    """An event recorded before the wait is returned at once."""
    recorder = EventRecorder()
    recorder(event("x", 3))
    assert recorder.wait_for("x", timeout=0).seq == 3


def test_wait_for_returns_an_event_from_another_thread() -> None:
    """A wait ends when another thread records the event."""
    recorder = EventRecorder()
    waiting = threading.Event()

    def produce() -> None:
        waiting.wait(timeout=10)
        recorder(event("other"))
        recorder(event("wanted", 7))

    thread = threading.Thread(target=produce)
    thread.start()
    waiting.set()
    try:
        assert recorder.wait_for("wanted", timeout=10).seq == 7
    finally:
        thread.join(timeout=10)


def test_wait_for_times_out_with_what_it_saw() -> None:
    """No matching event within the timeout raises TimeoutError listing the types seen."""
    recorder = EventRecorder()
    recorder(event("run.started"))
    with pytest.raises(TimeoutError, match=r"run\.started"):
        recorder.wait_for("run.completed", timeout=0.01)
