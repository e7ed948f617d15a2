"""``handle.schedule(...)``, ``schedules()`` and :class:`Schedule`: what users hold and call."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import PraxoError
from praxo_actors.actors import check_not_blocking, in_thread
from praxo_actors.codes import SCHEDULE_INVALID
from praxo_actors.memory._schedules import ScheduleRow, keyed_id
from praxo_actors.runtime._front._inputs import check_text
from praxo_actors.runtime._schedule._when import first_fire

if TYPE_CHECKING:
    from praxo_actors.runtime._front._handle import SessionHandle
    from praxo_actors.runtime._schedule._runner import ScheduleRunner

__all__ = ["Schedule", "aschedule", "aschedules", "schedule", "schedules"]

_NS = 1_000_000_000


def _time(ns: int | None) -> dt.datetime | None:
    return None if ns is None else dt.datetime.fromtimestamp(ns / _NS, tz=dt.UTC)


class Schedule:
    """A schedule of one session's runs, as the store held it when this was made.

    Made by :meth:`SessionHandle.schedule` and listed by ``schedules()``; a snapshot (list
    again to see later fires). Times are aware UTC datetimes.
    """

    __slots__ = (
        "_runner",
        "agent",
        "catch_up",
        "cron",
        "every",
        "fired",
        "id",
        "input",
        "key",
        "kind",
        "last_error",
        "last_fire",
        "last_outcome",
        "last_run_id",
        "next_fire",
        "session_id",
        "tz",
    )

    def __init__(self, row: ScheduleRow, runner: ScheduleRunner) -> None:
        self._runner = runner
        self.id: str = row.id
        """The schedule's id (the same for the same ``key`` and session)."""
        self.session_id: str = row.session_id
        self.agent: str | None = row.agent or None
        """The agent its runs name (None: the agent the session was last run with)."""
        self.input: str = row.input
        self.kind: str = row.kind
        """``"after"``, ``"at"``, ``"every"`` or ``"cron"``."""
        self.every: float | None = None if row.every_ns is None else row.every_ns / _NS
        self.cron: str | None = row.cron
        self.tz: str | None = row.tz
        self.key: str | None = row.key
        self.catch_up: str = row.catch_up
        self.next_fire: dt.datetime = _time(row.next_fire_ns) or dt.datetime.min
        """When it fires next (a fire claimed and not yet made: that fire's time)."""
        self.fired: int = row.fired
        """How many runs it has submitted."""
        self.last_fire: dt.datetime | None = _time(row.last_fire_ns)
        self.last_run_id: str | None = row.last_run_id
        self.last_outcome: str | None = row.last_outcome
        """``"fired"``, ``"failed"``, ``"skipped"`` (missed fires not made), or None."""
        self.last_error: str | None = row.last_error
        """The code of the last fire's failure."""

    def __repr__(self) -> str:
        return f"<Schedule {self.id!r} {self.kind} next={self.next_fire.isoformat()}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schedule) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def cancel(self) -> None:
        """Remove the schedule: it fires no more, after a restart too.

        Raises:
            PraxoError: ``SCHEDULE_NOT_FOUND`` when it is gone (cancelled, or a one-shot
                schedule that has fired); ``RUNTIME_BLOCKING_CALL`` on the runtime's loop
                thread (use :meth:`acancel`).
        """
        check_not_blocking("Schedule.cancel() (use acancel)")
        self._runner.cancel(self.id)

    async def acancel(self) -> None:
        """:meth:`cancel`, awaited (safe on the runtime's own loop)."""
        await in_thread(lambda: self._runner.cancel(self.id))


def _row(handle: SessionHandle, runner: ScheduleRunner, input: Any, **when: Any) -> ScheduleRow:
    if not isinstance(input, str):
        raise PraxoError(SCHEDULE_INVALID, "input must be a str")
    try:
        check_text(input, "input")
    except PraxoError as exc:
        raise PraxoError(SCHEDULE_INVALID, exc.message) from None
    key = when.pop("key")
    if key is not None and (not isinstance(key, str) or not key or "\x00" in key):
        raise PraxoError(SCHEDULE_INVALID, f"key must be a non-empty str, got {key!r}")
    now = runner.wall_ns()
    plan = first_fire(now, **when)
    sid = handle.id
    return ScheduleRow(
        id=f"sch-{uuid.uuid4().hex}" if key is None else keyed_id(sid, key),
        session_id=sid,
        agent=handle._agent or "",
        input=input,
        kind=plan.kind,  # type: ignore[arg-type]
        next_fire_ns=plan.first_ns,
        catch_up=when["catch_up"],
        key=key,
        every_ns=plan.every_ns,
        cron=plan.cron,
        tz=plan.tz,
        created_ns=now,
    )


def schedule(handle: SessionHandle, input: Any, **when: Any) -> Schedule:
    """See :meth:`SessionHandle.schedule`."""
    runner = handle._runtime._schedules
    row = _row(handle, runner, input, **when)
    check_not_blocking("SessionHandle.schedule() (use aschedule)")
    return Schedule(runner.create(row), runner)


async def aschedule(handle: SessionHandle, input: Any, **when: Any) -> Schedule:
    """See :meth:`SessionHandle.aschedule`."""
    runner = handle._runtime._schedules
    row = _row(handle, runner, input, **when)
    return Schedule(await in_thread(lambda: runner.create(row)), runner)


def schedules(runner: ScheduleRunner, session_id: str | None) -> list[Schedule]:
    """See :meth:`Runtime.schedules`."""
    check_not_blocking("schedules() (use aschedules)")
    return [Schedule(row, runner) for row in runner.rows(session_id)]


async def aschedules(runner: ScheduleRunner, session_id: str | None) -> list[Schedule]:
    """See :meth:`Runtime.aschedules`."""
    rows = await in_thread(lambda: runner.rows(session_id))
    return [Schedule(row, runner) for row in rows]
