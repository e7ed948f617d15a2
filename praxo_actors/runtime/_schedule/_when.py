"""When a schedule fires: its arguments checked, its first fire, and the fires after one.

Times are wall-clock nanoseconds since the epoch. ``after`` and ``every`` take seconds (an
``int`` or ``float``) or a ``timedelta``; ``at`` an aware ``datetime`` (a naive one is refused:
its meaning would depend on the host's zone); ``cron`` a five-field expression read by
``cronsim`` in the IANA zone ``tz`` (UTC by default), so that ``"0 9 * * *"`` in
``"Europe/Paris"`` is nine o'clock there, summer and winter.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import TYPE_CHECKING, Any

import msgspec

from praxo_actors._errors import PraxoError
from praxo_actors.codes import SCHEDULE_INVALID

if TYPE_CHECKING:
    from praxo_actors.memory._schedules import ScheduleRow

__all__ = ["Plan", "due_fires", "first_fire", "next_fire"]

_NS = 1_000_000_000
_CATCH_UPS = ("once", "all", "skip")
MAX_CATCH_UP = 1000
"""At most this many missed fires of one schedule made at once with ``catch_up="all"``."""


class Plan(msgspec.Struct, frozen=True):
    """A schedule's timing, checked: its kind, its first fire and what the next ones need."""

    kind: str
    first_ns: int
    every_ns: int | None = None
    cron: str | None = None
    tz: str | None = None


def _invalid(message: str) -> PraxoError:
    return PraxoError(SCHEDULE_INVALID, message)


def _seconds(name: str, value: object) -> float:
    if isinstance(value, dt.timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise _invalid(f"{name} must be seconds (int, float) or a timedelta, got {value!r}")
    if not math.isfinite(seconds) or seconds < 0 or seconds > 1e11:
        raise _invalid(f"{name} must be a finite number of seconds >= 0, got {value!r}")
    return seconds


def _zone(tz: object) -> dt.tzinfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if tz is None:
        return dt.UTC
    if not isinstance(tz, str) or not tz:
        raise _invalid(f"tz must be an IANA time zone name, got {tz!r}")
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise _invalid(f"unknown time zone {tz!r}") from None


def _cron_after(expr: str, tz: str | None, after_ns: int) -> int | None:
    """The first time ``expr`` matches strictly after ``after_ns`` (None: never again)."""
    from cronsim import CronSim

    zone = _zone(tz)
    start = dt.datetime.fromtimestamp(after_ns // _NS, tz=zone)
    for found in CronSim(expr, start):
        at_ns = int(found.timestamp()) * _NS
        if at_ns > after_ns:
            return at_ns
    return None  # pragma: no cover - cronsim yields forever or raises StopIteration


def first_fire(
    now_ns: int,
    after: Any,
    at: Any,
    every: Any,
    cron: Any,
    tz: Any,
    catch_up: Any,
) -> Plan:
    """Check a schedule's timing arguments and return its plan.

    Raises:
        PraxoError: ``SCHEDULE_INVALID`` for anything but exactly one of ``after``, ``at``,
            ``every``, ``cron``; a bad value of it; a ``tz`` without ``cron``; or a bad
            ``catch_up``.
    """
    options = (("after", after), ("at", at), ("every", every), ("cron", cron))
    given = [name for name, value in options if value is not None]
    if len(given) != 1:
        names = ", ".join(given) or "none"
        raise _invalid(f"give exactly one of after, at, every and cron (given: {names})")
    if catch_up not in _CATCH_UPS:
        raise _invalid(f"catch_up must be 'once', 'all' or 'skip', got {catch_up!r}")
    if tz is not None and cron is None:
        raise _invalid("tz is for cron expressions only (give at an aware datetime)")
    if after is not None:
        return Plan("after", now_ns + round(_seconds("after", after) * _NS))
    if at is not None:
        if not isinstance(at, dt.datetime):
            raise _invalid(f"at must be a datetime, got {at!r}")
        if at.tzinfo is None or at.utcoffset() is None:
            raise _invalid("at must be an aware datetime (give tzinfo, e.g. datetime.UTC)")
        return Plan("at", round(at.timestamp() * _NS))
    if every is not None:
        period = round(_seconds("every", every) * _NS)
        if period <= 0:
            raise _invalid(f"every must be more than 0 seconds, got {every!r}")
        return Plan("every", now_ns + period, every_ns=period)
    return _cron_plan(cron, tz, now_ns)


def _cron_plan(cron: object, tz: object, now_ns: int) -> Plan:
    from cronsim import CronSimError

    if not isinstance(cron, str) or not cron.strip():
        raise _invalid(f"cron must be a cron expression (str), got {cron!r}")
    _zone(tz)
    zone_name = None if tz is None else str(tz)
    try:
        first = _cron_after(cron, zone_name, now_ns)
    except (CronSimError, StopIteration, ValueError, OverflowError) as exc:
        raise _invalid(f"bad cron expression {cron!r}: {exc}") from None
    if first is None:
        raise _invalid(f"cron expression {cron!r} never matches")
    return Plan("cron", first, cron=cron, tz=zone_name)


def next_fire(row: ScheduleRow, after_ns: int) -> int | None:
    """The schedule's first occurrence strictly after ``after_ns`` (None: it fires no more)."""
    if row.kind == "every" and row.every_ns:
        steps = max(0, (after_ns - row.next_fire_ns) // row.every_ns + 1)
        return row.next_fire_ns + steps * row.every_ns
    if row.kind == "cron" and row.cron:
        try:
            return _cron_after(row.cron, row.tz, after_ns)
        except Exception:  # a zone gone from this host's database: it fires no more
            return None
    return None


def due_fires(row: ScheduleRow, now_ns: int, started_ns: int) -> tuple[list[int], int | None]:
    """The occurrences to fire now and the next one after ``now_ns``.

    Occurrences due since ``started_ns`` (while this process ran) all fire; those before it
    were missed while nothing ran, and fire as ``row.catch_up`` says: the latest one
    (``"once"``), each (``"all"``, at most :data:`MAX_CATCH_UP`) or none (``"skip"``).
    """
    due: list[int] = []
    missed: list[int] = []
    at: int | None = row.next_fire_ns
    while at is not None and at <= now_ns:
        if at < started_ns:
            if row.kind == "every" and row.every_ns and row.catch_up != "all":
                # Straight to the last missed one: a second's period missed for a day is
                # 86,400 steps otherwise.
                last = row.next_fire_ns + (started_ns - 1 - row.next_fire_ns) // row.every_ns * (
                    row.every_ns
                )
                missed = [last]
                at = last
            else:
                missed.append(at)
                del missed[: -MAX_CATCH_UP if row.catch_up == "all" else -1]
        else:
            due.append(at)
        at = next_fire(row, at) if row.kind in ("every", "cron") else None
    if row.catch_up == "skip":
        missed = []
    return missed + due, at
