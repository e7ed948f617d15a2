"""Forged session logs: each reads back as exactly the real history, or fails with a checkpoint
code. Never a different history that passes, never another exception.

The logs are real (``_session_logs.py``: a runtime with a ``checkpoint_key``, sessions with tools,
snapshots mid-log, durable runs cut off by a stop); the forgeries (``_forgeries.py``) are what a
writer to the store without the key can do to them. The bulk goes through ``read_session``; a
sample, and every forgery of a pending run or its journal, through a fresh runtime that restores
the session, resumes its run and runs once more. ``PRAXO_FORGERY_SAMPLE`` sets how many of the
bulk go through a runtime too (``make fuzz``: all of them).

A head moved back over records that are still there (or dropped) gives an earlier state the log
really had: a rollback, which no document can tell from a real log
(docs/how-to/durability.md). Those are counted apart; a runtime that saw the later version
committed refuses them (``CHECKPOINT_STALE``), as
``test_a_rollback_is_stale_for_the_runtime_that_saw_it`` checks.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, NamedTuple

import pytest
from _forgeries import Forgery, Overlay, forgeries, session_of
from _session_logs import KEY, TIMEOUT, Cut, Logs, agents, load_store, write_logs

from praxo_actors import PraxoError
from praxo_actors.core import CheckpointError
from praxo_actors.memory._log import HEADS, PENDING, SNAPSHOTS
from praxo_actors.models import Message
from praxo_actors.runtime import Runtime, read_session

SAMPLE = int(os.environ.get("PRAXO_FORGERY_SAMPLE", "30"))
# A marker outranks pytest's --timeout, so the long run of `make fuzz` sets its own here.
pytestmark = pytest.mark.timeout(300 if SAMPLE <= 1_000 else 3_600)
CODES = {
    "CHECKPOINT_SIGNATURE",
    "CHECKPOINT_INVALID",
    "CHECKPOINT_VERSION",
    "CHECKPOINT_TYPE_NOT_ALLOWED",
    "CHECKPOINT_STALE",
}


class _Item(NamedTuple):
    value: dict[str, Any]


class OverlayStore:
    """The real log's documents with a forgery's overlay: what ``read_session`` reads."""

    def __init__(self, docs: dict[Any, dict[str, Any]], overlay: Overlay) -> None:
        self.docs = docs
        self.overlay = overlay

    def get(self, namespace: tuple[str, ...], key: str) -> _Item | None:
        where = (tuple(namespace), key)
        value = self.overlay[where] if where in self.overlay else self.docs.get(where)
        return None if value is None else _Item(value)

    def get_many(self, namespace: tuple[str, ...], keys: list[str]) -> list[_Item | None]:
        return [self.get(namespace, key) for key in keys]


@pytest.fixture(scope="module")
def logs() -> Logs:
    return write_logs()


@pytest.fixture(scope="module")
def corpus(logs: Logs) -> list[Forgery]:
    return list(forgeries(logs))


def verdict(logs: Logs, kind: str, sid: str, read: list[Message] | str) -> str:
    """``same``, ``refused``, ``rollback`` (allowed for head edits only) or ``ACCEPTED``."""
    if isinstance(read, str):
        return "refused" if read in CODES else f"CODE {read}"
    if read == logs.history(sid):
        return "same"
    if kind == "rollback" and read in logs.states[sid][:-1]:
        return "rollback"
    return "ACCEPTED"


def rolls_back(overlay: Overlay) -> bool:
    """Whether the forgery only edits heads or drops documents: what a rollback does."""
    return all(value is None or ns == HEADS for (ns, _), value in overlay.items())


def read(store: Any, sid: str) -> list[Message] | str:
    try:
        return read_session(store, sid, key=KEY).messages
    except CheckpointError as exc:
        return exc.code
    except PraxoError as exc:  # a code, but not a checkpoint code
        return exc.code


def test_the_corpus_is_large_and_reads_back_without_forgeries(
    logs: Logs, corpus: list[Forgery]
) -> None:
    assert all(read(OverlayStore(logs.docs, {}), sid) == logs.history(sid) for sid in logs.states)
    counts: Counter[str] = Counter()
    bad: list[str] = []
    for kind, name, overlay in corpus:
        kind = "rollback" if rolls_back(overlay) else kind
        for sid in sorted({session_of(*where) for where in overlay}):
            try:
                outcome = verdict(logs, kind, sid, read(OverlayStore(logs.docs, overlay), sid))
            except Exception as exc:  # the finding this test is for
                outcome = f"EXCEPTION {type(exc).__name__}: {exc}"
            counts[f"{kind}:{outcome}"] += 1
            accepted_ok = kind == "resigned" and outcome == "ACCEPTED"  # signed with the key
            if outcome not in ("same", "refused", "rollback") and not accepted_ok:
                bad.append(f"{kind} {name} [{sid}]: {outcome}")
    assert len(corpus) >= 5000, len(corpus)
    assert not bad, (len(bad), bad[:60], counts)
    refused = sum(n for k, n in counts.items() if k.endswith(":refused"))
    assert refused >= 0.75 * len(corpus), counts


@pytest.mark.parametrize(
    "overlay",
    [
        {(HEADS, "s0"): {"version": 2**70, "base": 3, "results": 3}},  # reading it never ended
        {(HEADS, "s1"): {"version": 2, "base": 4, "results": 7}},  # before its snapshot
        {(HEADS, "s0"): {"version": "3", "base": 3, "results": 3}},  # read as version 0
        {(HEADS, "s0"): None, (SNAPSHOTS, "s0"): {"checkpoint": 5}},  # read as no snapshot
        {(PENDING, "p0"): {"run_id": "r", "agent": "durable", "input": "", "entries": 2**70}},
    ],
)
def test_a_head_no_log_could_have_is_invalid(logs: Logs, overlay: Overlay) -> None:
    """Found by the corpus: such heads hung the reader, or read as an empty or shorter log."""
    (sid,) = {session_of(*where) for where in overlay}
    assert read(OverlayStore(logs.docs, overlay), sid) == "CHECKPOINT_INVALID"


# -- through a runtime: restore, resume the journaled run, run once more --------------------------


def _through_runtime(logs: Logs, overlay: Overlay, sid: str) -> tuple[str, list[Message] | str]:
    """Resume ``sid``'s pending run on the forged log; return its outcome and the history."""
    docs = {k: v for k, v in {**logs.docs, **overlay}.items() if v is not None}
    store = load_store(docs)
    runtime = Runtime.start(store, checkpoint_key=KEY, idle_timeout=None, timeout=TIMEOUT)
    try:
        for name, factory in agents(Cut(blocking=False)).items():
            runtime.register_agent(name, factory, durable=name == "durable")
        runtime.resume_pending()
        handle = runtime.session(sid, agent="durable")
        try:
            outcome = handle.result(logs.pending[sid], timeout=2.0).output
        except PraxoError as exc:
            outcome = exc.code
        try:
            handle.run("once more").get(timeout=TIMEOUT)
            history: list[Message] | str = handle.history()
        except PraxoError as exc:
            history = exc.code
    finally:
        runtime.stop()
        store.close()
    return outcome, history


@pytest.fixture(scope="module")
def resumed(logs: Logs) -> dict[str, tuple[str, list[Message] | str]]:
    return {sid: _through_runtime(logs, {}, sid) for sid in logs.pending}


def test_resuming_an_unforged_log_finishes_the_run(logs: Logs, resumed: dict[str, Any]) -> None:
    for sid, (outcome, history) in resumed.items():
        assert outcome.startswith("answer 2: ")
        assert history[: len(logs.history(sid))] == logs.history(sid)
        assert [m.content for m in history[len(logs.history(sid)) :] if m.role == "user"] == [
            f"wait for {sid}",
            "once more",
        ]


@pytest.mark.parametrize(
    "name",
    [
        "input",
        "journal",
    ],
)
def test_forged_pending_runs_and_journals_are_not_resumed_as_another_run(
    logs: Logs, corpus: list[Forgery], resumed: dict[str, Any], name: str
) -> None:
    """Each forgery of a pending run or its journal (and a sample of the rest) resumes as the
    real run, or the run (or the restore) fails with a checkpoint code."""
    picked = [f for f in corpus if f[0] in ("pending", "journal")]
    picked += [f for f in corpus[:: max(1, len(corpus) // SAMPLE)] if f[0] != "resigned"]
    accepted: list[str] = []
    for kind, fname, overlay in picked:
        if name == "input" and "input=" not in fname:
            continue
        if name == "journal" and "input=" in fname:
            continue
        for sid in sorted({session_of(*where) for where in overlay} & set(logs.pending)):
            outcome, history = _through_runtime(logs, overlay, sid)
            real_outcome, real_history = resumed[sid]
            once = next(i for i, m in enumerate(real_history) if m.content == "once more")
            dropped = logs.history(sid) + real_history[once:]  # the run refused or not found
            if isinstance(history, str):
                if history in CODES:
                    continue  # the restore refused the forged log
            elif history == real_history and outcome == real_outcome:
                continue
            elif history == dropped and outcome not in (real_outcome,):
                continue  # the pending run failed with a code; what was committed stands
            elif rolls_back(overlay):
                continue
            accepted.append(f"{kind} {fname}: {outcome!r:.60}")
    assert not accepted, accepted
