"""Keep sessions of a cluster busy, one thread each, and record every run in a History.

Each session keeps ``window`` runs in flight: it submits runs until that many are unsettled,
then waits for the oldest. Every result and error lands in the :class:`~_history.History`; a
failure backs off a little before the next submission, so an outage is not a spin.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from _history import History, Run

__all__ = ["Load", "fresh_session", "probe", "time_to_serve"]

BACKOFF = 0.05  # seconds a session waits after a failed run before it submits again


class Load:
    """Drive ``sessions`` (session id → agent) on ``cluster`` until :meth:`stop`."""

    def __init__(
        self,
        cluster: Any,
        sessions: Mapping[str, str],
        *,
        window: int = 2,
        timeout: float = 120.0,
        history: History | None = None,
    ) -> None:
        self.cluster = cluster
        self.sessions = dict(sessions)
        self.window = window
        self.timeout = timeout
        self.history = history if history is not None else History()
        self._stopping = threading.Event()
        self._settled = threading.Condition()
        self.settled: list[Run] = []  # in the order they settled (under ``_settled``)
        self._threads = [
            threading.Thread(target=self._drive, args=(sid,), name=f"load-{sid}", daemon=True)
            for sid in self.sessions
        ]

    def start(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def _submit(self, session_id: str, number: int) -> tuple[Run, Any]:
        run = self.history.submitted(session_id, f"{session_id}/{number}")
        try:
            future = self.cluster.session(session_id, self.sessions[session_id]).run(run.input)
            run.where = f"{getattr(future, 'run_id', '?')} sent to {getattr(future, 'host', '?')}"
            return run, future
        except Exception as exc:  # recorded: the checker says whether it carries a code
            self._settle(run, None, exc)
            return run, None

    def _settle(self, run: Run, result: Any, error: BaseException | None) -> None:
        with self._settled:
            if error is None:
                run.acknowledge(result, time.monotonic())
            else:
                run.fail(error, time.monotonic())
            self.settled.append(run)
            self._settled.notify_all()

    def _drive(self, session_id: str) -> None:
        numbers = itertools.count(1)
        in_flight: deque[tuple[Run, Any]] = deque()
        while True:
            while not self._stopping.is_set() and len(in_flight) < self.window:
                run, future = self._submit(session_id, next(numbers))
                if future is None:
                    self._stopping.wait(BACKOFF)
                    continue
                in_flight.append((run, future))
            if not in_flight:
                return
            run, future = in_flight.popleft()
            sent_to = getattr(future, "host", "?")
            try:
                result = future.get(timeout=self.timeout)
            except Exception as exc:  # recorded: the checker says whether it carries a code
                self._settle(run, None, exc)
                self._stopping.wait(BACKOFF)
            else:
                self._settle(run, result, None)
            run.where = f"sent to {sent_to} ended on {getattr(future, 'host', '?')}"

    def wait_for(self, condition: Callable[[list[Run]], bool], timeout: float) -> bool:
        """Wait until ``condition(settled runs, in the order they settled)`` holds; it is
        checked again at each run that settles. False on timeout."""
        with self._settled:
            return self._settled.wait_for(lambda: condition(self.settled), timeout)

    def acknowledged(self, count: int, timeout: float) -> bool:
        """Wait until ``count`` runs were acknowledged; False on timeout."""
        return self.wait_for(lambda runs: sum(run.acknowledged for run in runs) >= count, timeout)

    def served_since(self, moment: float, timeout: float) -> float | None:
        """Wait until every session has an acknowledged run submitted after ``moment``; return
        when the last of them was acknowledged (None: not within ``timeout``)."""
        firsts: dict[str, float] = {}
        seen = 0

        def served(runs: list[Run]) -> bool:
            nonlocal seen
            for run in runs[seen:]:
                if run.acknowledged and run.submitted_at > moment and run.settled_at is not None:
                    firsts.setdefault(run.session_id, run.settled_at)
            seen = len(runs)
            return len(firsts) == len(self.sessions)

        if not self.wait_for(served, timeout):
            return None
        return max(firsts.values())

    def unserved(self, moment: float) -> list[str]:
        """Each session with no acknowledged run submitted after ``moment``, with its last runs
        (what they got, or that they are still in flight)."""
        with self._settled:
            served = {
                run.session_id
                for run in self.settled
                if run.acknowledged and run.submitted_at > moment
            }
        lines = []
        for sid in sorted(set(self.sessions) - served):
            last = self.history.sessions.get(sid, [])[-3:]
            states = [f"{run.input}: {_state(run)}" for run in last]
            lines.append(f"{sid}: " + "; ".join(states))
        return lines

    def stop(self, timeout: float) -> None:
        """Stop submitting; wait for every run in flight to settle and every thread to end.

        Raises:
            AssertionError: A session's thread is still running after ``timeout`` seconds.
        """
        self._stopping.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        alive = [thread.name for thread in self._threads if thread.is_alive()]
        assert alive == [], f"sessions still running after {timeout} s: {alive}"


def _state(run: Run) -> str:
    now = time.monotonic()
    if run.settled_at is None:
        return f"in flight for {now - run.submitted_at:.1f} s ({run.where or 'not sent back'})"
    took = f"after {run.settled_at - run.submitted_at:.1f} s, {now - run.settled_at:.1f} s ago"
    if run.error is not None:
        code = getattr(run.error, "code", type(run.error).__name__)
        return f"failed {code} {took} ({run.where})"
    return f"ok {took} ({run.where})"


_FRESH = itertools.count()


def fresh_session(cluster: Any, host: str, prefix: str = "fresh") -> str:
    """Return a session id not used before that routes to ``host`` while every host is live."""
    from praxo_actors.cluster._core import _score

    hosts = list(cluster._hosts)
    while True:
        candidate = f"{prefix}-{next(_FRESH)}"
        if max(hosts, key=lambda h: _score(h, candidate)) == host:
            return candidate


def probe(cluster: Any, history: History, host: str, deadline: float, timeout: float) -> float:
    """Send fresh sessions to ``host`` until one is served there; return when it was.

    Raises:
        AssertionError: None was served there by ``deadline`` (``time.monotonic()``).
    """
    from praxo_actors import PraxoError

    tick = threading.Event()  # never set: a bounded pause between two tries
    tried: list[str] = []
    while time.monotonic() < deadline:
        sid = fresh_session(cluster, host)
        if cluster.host_of(sid) != host:  # passed over for now (a call to it failed)
            tick.wait(0.1)
            continue
        run = history.submitted(sid, f"{sid}/1")
        try:
            run.acknowledge(cluster.session(sid).run(run.input).get(timeout=timeout))
        except PraxoError as exc:
            run.fail(exc)
            tried.append(f"{sid}: {exc.code}")
            tick.wait(0.1)
            continue
        return time.monotonic()
    raise AssertionError(f"{host} served no fresh session in time: {tried[-5:]}")


def time_to_serve(load: Load, ended: float, bound: float, timeout: float) -> float:
    """Wait until the cluster serves again after a fault that ended at ``ended``: every busy
    session of ``load`` and a fresh session on every host get a run through. Return how long
    after ``ended`` that held.

    Raises:
        AssertionError: It did not hold within ``bound`` seconds of ``ended``.
    """
    deadline = ended + bound
    served = load.served_since(ended, max(0.0, deadline - time.monotonic()))
    if served is None:
        from _faults import host_state

        unserved = load.unserved(ended)
        ids = [line.partition(":")[0] for line in unserved]
        runs = [
            run.where.split()[0]
            for sid in ids
            for run in load.history.sessions.get(sid, [])[-3:]
            if run.settled_at is None and run.where.startswith("run_")
        ]
        hosts = [
            f"-- {host}:\n{host_state(load.cluster, host, ids, runs)}"
            for host in load.cluster._hosts
        ]
        raise AssertionError(
            f"a busy session was not served within {bound} s:\n" + "\n".join(unserved + hosts)
        )
    cluster = load.cluster
    probes = [probe(cluster, load.history, host, deadline, timeout) for host in cluster._hosts]
    return max(served, *probes) - ended
