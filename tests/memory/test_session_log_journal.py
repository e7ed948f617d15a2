"""The session log's pending run: a commit drops only its own run's journal, and a journal
write of a run that is no longer pending is skipped."""

from __future__ import annotations

from praxo_actors.core._log_docs import dump_record
from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._log import Commit, JournalAppend, PendingRun, SessionLog
from praxo_actors.models import message_assistant, message_user


def entry(run: str, i: int) -> JournalAppend:
    """Journal entry ``i`` of run ``run`` (its first when ``i`` is 0)."""
    return JournalAppend("s", PendingRun(run, "default", f"in-{run}", entries=i + 1), f"{run}:{i}")


def commit(run: str, version: int, entries: int) -> Commit:
    """The commit of run ``run`` at ``version``, dropping its ``entries`` journal entries."""
    record = dump_record("s", version, run, [message_user(f"in-{run}"), message_assistant("ok")])
    return Commit("s", version - 1, run, record, journal=entries)


def test_a_run_begun_in_the_flush_of_the_commit_before_it_keeps_its_journal() -> None:
    """The next run's first entry, gathered with the previous run's commit, survives it: a
    resume of the next run then finds every entry it journaled."""
    with InMemoryStore() as store:
        log = SessionLog(store)
        log.write([], [entry("r1", 0), entry("r1", 1), entry("r1", 2)])
        assert log.write([commit("r1", 1, 3)], [entry("r2", 0)]) == [True]
        log.write([], [entry("r2", 1)])
        [state] = log.load(["s"])
        assert state is not None and state.pending is not None
        assert (state.pending.run_id, state.pending.entries) == ("r2", 2)
        assert state.journal == ["r2:0", "r2:1"]
        log.write([commit("r2", 2, 2)], [])
        [state] = log.load(["s"])
        assert state is not None and state.pending is None and state.version == 2
        # Nothing of either journal is left behind.
        assert store.search(("praxo", "journal")) == []


def resumed(i: int) -> JournalAppend:
    """Run r1's resume mark, after ``i`` journal entries."""
    return JournalAppend("s", PendingRun("r1", "default", "in-r1", entries=i, resumes=1))


def test_a_journal_write_of_a_run_finished_elsewhere_is_skipped() -> None:
    """A second copy of a resumed run (another host resumed it too) writes after the first
    committed it: the log is left with no half-pending run, and a new run begins as ever."""
    with InMemoryStore() as store:
        log = SessionLog(store)
        log.write([], [entry("r1", 0)])
        log.write([], [resumed(1)])  # one host resumes it
        assert log.write([commit("r1", 1, 1)], []) == [True]  # and finishes it
        late = JournalAppend("s", PendingRun("r1", "default", "in-r1", 2, 1), "r1:1")
        log.write([], [resumed(1), late])  # the other copy's mark and next entry
        [state] = log.load(["s"])
        assert state is not None and state.version == 1
        assert state.pending is None and state.journal == []
        log.write([], [entry("r2", 0)])
        [state] = log.load(["s"])
        assert state is not None and state.pending is not None
        assert (state.pending.run_id, state.journal) == ("r2", ["r2:0"])


def test_write_all_reports_each_journal_write() -> None:
    """Per append, whether it applied: the writer fails the run whose write was skipped."""
    with InMemoryStore() as store:
        log = SessionLog(store)
        assert log.write_all([], [entry("r1", 0), resumed(1)]) == ([], [True, True])
        assert log.write_all([commit("r1", 1, 1)], [resumed(1)]) == ([True], [True])
        assert log.write_all([], [resumed(1)]) == ([], [False])
