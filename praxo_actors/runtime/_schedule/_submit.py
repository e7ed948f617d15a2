"""A fire made: its input submitted as a run of its session, and its events told.

``schedule.fired`` is told once the run is submitted (a subscriber then finds the run by its
id); ``schedule.failed`` when submitting failed or the run was refused before it ran (its
code in ``data["code"]``), always after the ``schedule.fired`` of the same run.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.codes import RUNTIME_STOPPED
from praxo_actors.memory._schedules import ScheduleRow
from praxo_actors.models import Event
from praxo_actors.runtime._protocol import Publish, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._front._runtime import Runtime
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["submit_fire"]

# Codes a run fails with before it runs: the fire did not happen.
_REFUSED = frozenset(
    {
        "RUNTIME_UNKNOWN_AGENT",
        "RUNTIME_SESSION_LIMIT",
        "RUNTIME_STOPPED",
        "SESSION_OVERLOADED",
        "SESSION_BUSY",
        "SESSION_START_FAILED",
    }
)


def submit_fire(
    front: Runtime | None,
    kernel: Kernel,
    timeout: float,
    row: ScheduleRow,
    run_id: str,
    occurrence_ns: int,
    now_ns: int,
) -> PraxoError | None:
    """Submit one fire of ``row`` as run ``run_id`` and tell its events; return the error
    that kept it from being submitted (None: submitted)."""
    from praxo_actors.runtime._front._handle import SessionHandle
    from praxo_actors.runtime._front._submit import _journaled, _send

    data: dict[str, Any] = {"schedule_id": row.id, "occurrence_ns": occurrence_ns}
    if row.key is not None:
        data["key"] = row.key
    told = _Told(kernel, timeout, Event("", run_id, row.session_id, 0, now_ns, data))
    try:
        if front is None:
            raise AgentError(RUNTIME_STOPPED, "the runtime has stopped", run_id)
        handle = SessionHandle(front, kernel, row.session_id, row.agent or None)
        if _journaled(handle, kernel):
            stored = threading.Event()
            future = _send(handle, kernel, run_id, row.input, None, stored.set)
            stored.wait(timeout)
        else:
            future = handle._submit(run_id, row.input, None, None)
    except PraxoError as exc:
        told.fired()
        told.refused(exc.code)
        return exc
    future.add_done_callback(told.ended)
    told.fired()
    return None


def _publish(kernel: Kernel, timeout: float, event: Event, wait: bool) -> None:
    """Hand ``event`` to the bus (through the loop, which holds its ref); with ``wait``,
    return once the bus has it in its mailbox (what is told next comes after it)."""
    if not kernel.host.has_subscribers():
        return  # as a session's events: built only for a subscriber

    def tell() -> None:
        bus = kernel.bus_ref
        if bus is not None and kernel.host.has_subscribers():
            bus.tell(encode(Publish(events=[event])))

    if not wait:
        kernel.post(tell)
        return
    with contextlib.suppress(PraxoError):  # the runtime is stopping: no one to tell
        kernel.call(tell, timeout=timeout)


class _Told:
    """One fire's events: ``schedule.fired`` once the run is submitted, then
    ``schedule.failed`` if the run was refused (the refusal, on the runtime's loop, may come
    first: it then waits for the fired event)."""

    def __init__(self, kernel: Kernel, timeout: float, event: Event) -> None:
        self._kernel, self._timeout, self._event = kernel, timeout, event
        self._lock = threading.Lock()
        self._announced = False
        self._refusal: str | None = None

    def fired(self) -> None:
        event = Event("schedule.fired", *_rest(self._event))
        _publish(self._kernel, self._timeout, event, wait=True)
        with self._lock:
            self._announced = True
            code, self._refusal = self._refusal, None
        if code is not None:
            self.refused(code)

    def refused(self, code: str) -> None:
        with self._lock:
            if not self._announced:
                self._refusal = code
                return
        run_id, session_id, seq, time_ns, data = _rest(self._event)
        event = Event("schedule.failed", run_id, session_id, seq, time_ns, {**data, "code": code})
        _publish(self._kernel, self._timeout, event, wait=False)

    def ended(self, done: Any) -> None:
        try:
            done.get(timeout=0)
        except PraxoError as exc:
            if exc.code in _REFUSED:
                self.refused(exc.code)
        except Exception:  # the run's own failure is the run's events' to tell
            pass


def _rest(event: Event) -> tuple[str, str, int, int, dict[str, Any]]:
    return event.run_id, event.session_id, event.seq, event.time_ns, event.data
