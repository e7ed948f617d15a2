"""Schedules in the memory store: one document per schedule, claimed by compare-and-set.

``praxo/schedules / <schedule id>`` → a :class:`ScheduleRow`. The row says what to run (the
session, the agent, the input), when (its kind, its next fire in wall-clock nanoseconds) and
how its last fire went. A fire is *claimed* before it is made: the claim writes a lease (an
owner and the time it runs out) into the row by :func:`~praxo_actors.memory._swap.swap`, a
compare-and-set in the database, so that of several hosts sharing a store one claims each
occurrence; the claimer then submits the run and *settles* the row (its next fire, no lease)
by the same compare-and-set. A claimer that dies in between leaves a lease that runs out: the
next claimer fires the occurrence again under the same run id, which a run already accepted
makes a no-op.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Literal

import msgspec

from praxo_actors.core import encode_json
from praxo_actors.memory._base import StoreBase
from praxo_actors.memory._swap import read_text, swap

__all__ = [
    "SCHEDULES",
    "ScheduleRow",
    "delete_row",
    "insert_row",
    "iter_rows",
    "keyed_id",
    "read_row",
    "read_rows",
    "replace_row",
]

SCHEDULES = ("praxo", "schedules")

Kind = Literal["after", "at", "every", "cron"]
CatchUp = Literal["once", "all", "skip"]


class ScheduleRow(msgspec.Struct, frozen=True, omit_defaults=True):
    """A schedule as the store keeps it (times in wall-clock nanoseconds since the epoch).

    ``agent`` is ``""`` for the agent the session was last run with. ``every_ns`` is the
    period of an ``every`` schedule; ``cron`` and ``tz`` an expression and the IANA zone it
    reads in. ``next_fire_ns`` is the next occurrence not yet fired. ``lease_owner`` and
    ``lease_until_ns`` hold a claim on that occurrence.
    """

    id: str
    session_id: str
    agent: str
    input: str
    kind: Kind
    next_fire_ns: int
    catch_up: CatchUp = "once"
    key: str | None = None
    every_ns: int | None = None
    cron: str | None = None
    tz: str | None = None
    created_ns: int = 0
    fired: int = 0
    last_fire_ns: int | None = None
    last_run_id: str | None = None
    last_outcome: str | None = None  # "fired", "failed" or "skipped"
    last_error: str | None = None
    lease_owner: str | None = None
    lease_until_ns: int = 0


_decode = msgspec.json.Decoder(ScheduleRow).decode


def keyed_id(session_id: str, key: str) -> str:
    """The id of the schedule ``key`` names in session ``session_id`` (the same on every host)."""
    digest = hashlib.sha256(f"{session_id}\x00{key}".encode()).hexdigest()
    return f"sch-{digest[:32]}"


def _text(row: ScheduleRow) -> str:
    return encode_json(msgspec.to_builtins(row))


def _row(text: str | None) -> ScheduleRow | None:
    if text is None:
        return None
    try:
        return _decode(text)
    except msgspec.MsgspecError:
        return None  # not a schedule this code can read: left alone


def read_row(store: StoreBase, schedule_id: str) -> tuple[ScheduleRow | None, str | None]:
    """Return the schedule ``schedule_id`` (None: none, or a row this code cannot read) and
    its stored text, for a later :func:`replace_row`."""
    text = read_text(store, SCHEDULES, schedule_id)
    return _row(text), text


def read_rows(store: StoreBase, session_id: str | None = None) -> list[ScheduleRow]:
    """Return every schedule (or the session's), in id order."""
    return [row for row in iter_rows(store) if session_id is None or row.session_id == session_id]


def iter_rows(store: StoreBase, page: int = 1000) -> Iterator[ScheduleRow]:
    """Yield every schedule in id order, reading ``page`` at a time (a store of 100,000
    schedules is never all in memory at once)."""
    offset = 0
    while True:
        items = store.search(SCHEDULES, limit=page, offset=offset)
        for item in items:
            try:
                yield msgspec.convert(item.value, ScheduleRow)
            except msgspec.ValidationError:
                continue  # not a schedule this code can read: left alone
        if len(items) < page:
            return
        offset += len(items)


def insert_row(store: StoreBase, row: ScheduleRow) -> ScheduleRow:
    """Store ``row`` unless a schedule with its id is there; return the one stored."""
    while True:
        if swap(store, SCHEDULES, row.id, None, _text(row)):
            return row
        found, _text_found = read_row(store, row.id)
        if found is not None:
            return found
        if _text_found is None:
            continue  # deleted between the two calls: try again
        return row  # an unreadable row under a random id: not reached in practice


def replace_row(store: StoreBase, old_text: str, row: ScheduleRow) -> str | None:
    """Replace the row stored as ``old_text`` with ``row`` if no one changed it meanwhile;
    return the new text (None: it changed, or it is gone)."""
    text = _text(row)
    return text if swap(store, SCHEDULES, row.id, old_text, text) else None


def delete_row(store: StoreBase, schedule_id: str) -> bool:
    """Remove the schedule ``schedule_id``; return whether it was there."""
    return store.delete(SCHEDULES, schedule_id)
