"""The session log's index of runs by id: which session keeps a run's result.

``praxo/runs / r`` → ``{"session": s, "n": n}``: run ``r``'s result is kept by session ``s``
in result ``n`` (its slot ``n mod 100``). A commit that keeps a result writes the run's row in
the same change; when the ring of results wraps around, the result it overwrites takes its row
with it, so the index holds at most one row per kept result. Durable runs accepted or in
progress are found in the inbox and the pending runs instead (they have no result yet).

Limits (such a run is found through its session's handle): results kept before the index
existed have no row; a run kept twice (interrupted, then resumed to its end) loses its row when
its first result leaves the ring, before its second does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from praxo_actors.memory._log_rows import stored_text

__all__ = ["RUNS", "index_rows", "indexed_session"]

RUNS = ("praxo", "runs")

Get = Callable[[tuple[str, ...], list[str]], list[dict[str, Any] | None]]
GetTexts = Callable[[tuple[str, ...], list[str]], list[str | None]]
Put = tuple[tuple[str, ...], str, str]  # a row's text
Delete = tuple[tuple[str, ...], str]

_ENCODER = msgspec.json.Encoder()


class _RunOf(msgspec.Struct):
    run_id: str = ""


_decode_run = msgspec.json.Decoder(_RunOf).decode


def _indexable(run_id: str | None) -> bool:
    return bool(run_id) and "\x00" not in str(run_id)


def index_rows(
    get_texts: GetTexts,
    results_ns: tuple[str, ...],
    kept: Sequence[tuple[str, int, str | None]],
    ring: int,
) -> tuple[list[Put], list[Delete]]:
    """Return the index's rows for the results ``kept`` (session, result number, run id) and
    the rows of the results they overwrite, to drop.

    Reads only when a session's ring has wrapped around: the results overwritten, for their
    run ids (one batched read of their rows' text).
    """
    puts: list[Put] = [
        (RUNS, run_id, f'{{"n":{n},"session":{_ENCODER.encode(sid).decode()}}}')
        for sid, n, run_id in kept
        if run_id is not None and _indexable(run_id)
    ]
    evicted = [f"{sid}#{(n - ring) % ring}" for sid, n, _ in kept if n >= ring]
    if not evicted:
        return puts, []
    written = {key for _, key, _ in puts}
    deletes: list[Delete] = []
    for text in get_texts(results_ns, evicted):
        run_id = _run_of(text)
        if run_id is not None and run_id not in written:
            deletes.append((RUNS, run_id))
    return puts, deletes


def _run_of(row: str | None) -> str | None:
    text = stored_text("result", row)
    try:
        run_id = _decode_run(text).run_id
    except msgspec.MsgspecError:
        return None
    return run_id if _indexable(run_id) else None


def indexed_session(get_many: Get, run_id: str) -> str | None:
    """Return the session the index names for ``run_id`` (None: no row, or a broken one)."""
    if not _indexable(run_id):
        return None
    row = get_many(RUNS, [run_id])[0]
    session = None if row is None else row.get("session")
    return session if isinstance(session, str) and session else None
