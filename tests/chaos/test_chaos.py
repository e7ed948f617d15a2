"""Chaos: 1,000 sessions while model calls raise and session actors crash mid-run.

Every run must end (completed, failed with a code, or with the model's own exception), every
committed message must survive, the runtime must keep serving afterwards, and nothing may leak:
no pending run, no actor, no thread.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pykka
import pytest
from _helpers import assert_no_new_threads

from praxo_actors import PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.runtime import RunFuture, Runtime

SESSIONS = 1_000
RUNS_PER_SESSION = 2
FAULT_RATE = 0.10  # of model calls
CRASH_RATE = 0.05  # of sessions, crashed during their first run
TIMEOUT = 60.0


class InjectedFault(Exception):
    """The exception a faulty model call raises; it must reach the run's caller unchanged."""


class ChaosModel:
    """Answer ``<input>:ok``; raise for a share of calls; crash chosen sessions mid-run."""

    def __init__(self, seed: int, crash: set[str]) -> None:
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self.crash = set(crash)
        self.runtime: Runtime | None = None
        self.faults = True
        self.calls = 0
        self.raised = 0

    def __call__(self, request: Request) -> Response:
        with self._lock:
            self.calls += 1
            crash = request.session_id in self.crash
            self.crash.discard(request.session_id)
            fault = not crash and self.faults and self._random.random() < FAULT_RATE
            self.raised += fault
        if crash:
            # The Crash message reaches the session before this call's result does: the
            # session fails while its run is in flight.
            assert self.runtime is not None
            self.runtime.session(request.session_id).crash_for_testing()
        elif fault:
            raise InjectedFault(f"model failed for {request.run_id}")
        text = request.messages[-1].content
        return Response(message_assistant(f"{text}:ok"))


@pytest.fixture
def guarded() -> Iterator[list[Runtime]]:
    """Collect runtimes; stop them at teardown and check that no actor or thread is left."""
    threads_before = set(threading.enumerate())
    actors_before = set(pykka.ActorRegistry.get_all())
    runtimes: list[Runtime] = []
    yield runtimes
    for rt in runtimes:
        rt.stop()
    assert set(pykka.ActorRegistry.get_all()) - actors_before == set()
    assert_no_new_threads(threads_before, 10.0)


def _outcome(future: RunFuture) -> tuple[str, Any]:
    try:
        return "completed", future.get(timeout=TIMEOUT)
    except InjectedFault as exc:
        return "raised", exc
    except PraxoError as exc:
        return "code", exc.code


@pytest.mark.parametrize("durable", [False, True], ids=["plain", "durable"])
def test_chaos_every_run_ends_and_every_commit_survives(
    guarded: list[Runtime], durable: bool
) -> None:
    """Under injected faults and crashes, runs all end, commits survive and the runtime serves.

    With durable agents no run fails for a crash: a crashed session resumes its run.
    """
    ids = [f"session-{n}" for n in range(SESSIONS)]
    crash = set(random.Random(7).sample(ids, int(SESSIONS * CRASH_RATE)))
    model = ChaosModel(seed=11, crash=crash)
    # A short idle timeout adds passivation and reactivation to the churn.
    rt = Runtime.start(idle_timeout=0.05, io_threads=64, timeout=30.0)
    guarded.append(rt)
    model.runtime = rt
    rt.register_agent("default", lambda: new_agent_options(model), durable=durable)
    seen = [0]
    events = rt.events.subscribe(lambda event: seen.__setitem__(0, seen[0] + 1), "*", buffer=64)

    def submit(session_id: str) -> list[tuple[str, RunFuture]]:
        handle = rt.session(session_id)
        # Sent back to back: the second run waits in the session's queue behind the first.
        return [(f"{session_id}/{n}", handle.run(f"{session_id}/{n}")) for n in range(2)]

    with ThreadPoolExecutor(8) as pool:
        submitted = dict(zip(ids, pool.map(submit, ids), strict=True))

    outcomes = {
        sid: [(text, *_outcome(future)) for text, future in runs] for sid, runs in submitted.items()
    }
    kinds = [kind for runs in outcomes.values() for _, kind, _ in runs]
    codes = {value for runs in outcomes.values() for _, kind, value in runs if kind == "code"}
    assert len(kinds) == SESSIONS * RUNS_PER_SESSION
    assert kinds.count("raised") == model.raised > 0
    crashed_runs = kinds.count("code")
    if durable:
        assert codes == set() and crashed_runs == 0
    else:
        assert codes == {"SESSION_CRASHED"}
        assert len(crash) <= crashed_runs <= 2 * len(crash)
    assert rt.statistics().crashes == len(crash)

    # Every committed message survives: each history is exactly its completed runs, in order.
    for sid, runs in outcomes.items():
        expected = []
        for text, kind, result in runs:
            if kind == "completed":
                assert result.output == f"{text}:ok"
                expected += [text, f"{text}:ok"]
        assert [m.content for m in rt.session(sid).history()] == expected, sid

    # The runtime keeps serving, crashed sessions included, and the faults are gone.
    model.faults = False
    again = sorted(crash)[:25] + ids[:25]
    futures = [rt.session(sid).run("again") for sid in again]
    assert all(f.get(timeout=TIMEOUT).output == "again:ok" for f in futures)

    stats = rt.statistics()
    assert stats.runs_pending == 0
    assert stats.runs_started == stats.runs_completed + stats.runs_failed
    assert stats.runs_started == SESSIONS * RUNS_PER_SESSION + len(again)
    assert stats.runs_completed == kinds.count("completed") + len(again)
    assert stats.activations - stats.passivations - stats.crashes == stats.live_sessions
    assert events.active
    assert events.wait_idle(TIMEOUT)
    assert seen[0] == events.statistics().delivered > 0
