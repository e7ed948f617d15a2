"""CrashOnAskError: let-it-crash on the ask path too, without changing the tell path."""

from __future__ import annotations

import threading

import pykka
import pytest
from _supervision_helpers import TIMEOUT, AskCrashWorker, Crash, DownWaiter, Trace, crash

from supervisors import monitor


def test_ask_exception_reaches_caller_and_crashes_actor() -> None:
    """The caller gets the original exception and the actor has crashed by then."""
    trace = Trace()
    ref = AskCrashWorker.start("a", trace)
    waiter = DownWaiter(ref)
    with pytest.raises(ValueError, match="a refused"):
        ref.proxy().fail().get(timeout=TIMEOUT)
    assert not ref.is_alive()
    down = waiter.wait()
    assert down.reason == "crash"
    assert isinstance(down.exception, ValueError)
    assert trace.of("failure") == ["a"]
    assert trace.of("stop") == []


def test_ask_crash_down_comes_after_on_failure() -> None:
    """On the ask path too, the Down is delivered once on_failure has run."""
    trace = Trace()
    ref = AskCrashWorker.start("a", trace)
    failures_seen_at_down: list[list[str]] = []
    monitor(ref, lambda _down: failures_seen_at_down.append(trace.of("failure")))
    with pytest.raises(ValueError, match="refused"):
        ref.proxy().fail().get(timeout=TIMEOUT)
    assert failures_seen_at_down == [["a"]]


def test_messages_behind_the_failed_ask_get_actor_dead() -> None:
    """Asks queued behind the failing one are answered with ActorDeadError, not handled."""
    ref = AskCrashWorker.start("a")
    entered, release = threading.Event(), threading.Event()
    ref.tell(("block", entered, release))
    assert entered.wait(TIMEOUT)
    failing = ref.proxy().fail()
    behind = ref.ask("ping", block=False)
    release.set()
    with pytest.raises(ValueError, match="refused"):
        failing.get(timeout=TIMEOUT)
    with pytest.raises(pykka.ActorDeadError):
        behind.get(timeout=TIMEOUT)


def test_tell_path_is_unchanged() -> None:
    """A tell exception still crashes the actor once, with on_failure run once."""
    trace = Trace()
    ref = AskCrashWorker.start("a", trace)
    seen = DownWaiter(ref)
    down = crash(ref)
    assert isinstance(down.exception, Crash)
    assert trace.of("failure") == ["a"]
    assert len(seen.downs) == 1
