"""The observer's own record of recent runs: a bounded ring of runs and their events.

Fed by the observer's one bus subscription (every event, on a delivery thread), read by the
app's handlers. The runtime keeps no such history itself; the observer keeps the last
``max_runs`` runs it saw start (older ones are forgotten first) and up to ``max_events`` events
of each, so what it holds is bounded whatever the runtime does.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from praxo_actors.models import Event

__all__ = ["RUN_STATUSES", "RunLog", "RunRecord"]

RUN_STATUSES = ("running", "interrupted", "completed", "failed")
_ENDS = {"run.completed": "completed", "run.failed": "failed", "run.interrupted": "interrupted"}


class RunRecord:
    """One run as the events showed it (mutated only under the log's lock)."""

    __slots__ = (
        "agent",
        "ended_ns",
        "error_code",
        "events",
        "run_id",
        "session_id",
        "started_ns",
        "status",
    )

    def __init__(self, run_id: str, session_id: str, started_ns: int) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.started_ns = started_ns
        self.ended_ns: int | None = None
        self.agent: str | None = None
        self.error_code: str | None = None
        self.events: list[Event] = []
        self.status = "running"  # or "interrupted", "completed", "failed"

    def as_dict(self) -> dict[str, Any]:
        """Return the run as ``/api/runs`` shows it."""
        duration = None
        if self.ended_ns is not None:
            duration = round(max(0, self.ended_ns - self.started_ns) / 1e6, 3)
        return {
            "run_id": self.run_id,
            "session_id": self.session_id,
            "agent": self.agent,
            "status": self.status,
            "started_at": self.started_ns / 1e9,
            "duration_ms": duration,
            "error_code": self.error_code,
        }


class RunLog:
    """The last ``max_runs`` runs and up to ``max_events`` events of each.

    Called with every event on an event delivery thread; read from any thread.
    """

    def __init__(self, max_runs: int = 1000, max_events: int = 500) -> None:
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, RunRecord] = OrderedDict()
        self._max_runs = max_runs
        self._max_events = max_events
        # Callbacks told of the next run.resumed of a session, by session id.
        self._resumes: dict[str, list[Callable[[], None]]] = {}

    def __call__(self, event: Event) -> tuple[bool, float | None] | None:
        """Take one event: a ``run.started`` opens a record, the run's end closes it.

        Returns ``(failed, duration_ms)`` when the event completes or fails its run.
        """
        with self._lock:
            record = self._runs.get(event.run_id)
            if record is None:
                if not event.run_id:
                    return None
                # A run seen first mid-way (the observer came after it started) is kept too.
                record = RunRecord(event.run_id, event.session_id, event.time_ns)
                self._runs[event.run_id] = record
                if len(self._runs) > self._max_runs:
                    self._runs.popitem(last=False)
            if len(record.events) < self._max_events:
                record.events.append(event)
            status = _ENDS.get(event.type)
            if status is not None:
                record.status = status
                record.ended_ns = event.time_ns
                if status == "failed" and isinstance(event.data, dict):
                    code = event.data.get("code")
                    record.error_code = code if isinstance(code, str) else None
                if status != "interrupted":
                    return status == "failed", record.as_dict()["duration_ms"]
            elif event.type == "run.resumed":
                if record.status == "interrupted":
                    record.status = "running"
                    record.ended_ns = None
                for told in self._resumes.pop(event.session_id, ()):
                    with contextlib.suppress(Exception):  # (a closed loop): the log goes on
                        told()
        return None

    def on_resumed(self, session_id: str, told: Callable[[], None]) -> Callable[[], None]:
        """Call ``told()`` (on a delivery thread) at the session's next ``run.resumed``, once;
        return a function that forgets it."""
        with self._lock:
            self._resumes.setdefault(session_id, []).append(told)

        def forget() -> None:
            with self._lock:
                waiting = self._resumes.get(session_id)
                if waiting is not None and told in waiting:
                    waiting.remove(told)
                    if not waiting:
                        del self._resumes[session_id]

        return forget

    def runs(
        self,
        status: str | None = None,
        agent: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Return the newest runs first, filtered by status, agent and session."""
        with self._lock:
            records = list(self._runs.values())
            out = []
            for record in reversed(records):
                if status is not None and record.status != status:
                    continue
                if agent is not None and record.agent != agent:
                    continue
                if session_id is not None and record.session_id != session_id:
                    continue
                out.append(record.as_dict())
                if len(out) >= limit:
                    break
        return out

    def run(self, run_id: str) -> tuple[dict[str, Any], list[Event]] | None:
        """Return one run and its events (None if the log does not hold it)."""
        with self._lock:
            record = self._runs.get(run_id)
            if record is None:
                return None
            return record.as_dict(), list(record.events)

    def without_agent(self) -> set[str]:
        """Return the sessions of the runs whose agent is not known yet."""
        with self._lock:
            return {r.session_id for r in self._runs.values() if r.agent is None}

    def set_agent(self, session_id: str, agent: str) -> None:
        """Name the agent of the session's runs that have none yet."""
        with self._lock:
            for record in self._runs.values():
                if record.session_id == session_id and record.agent is None:
                    record.agent = agent
