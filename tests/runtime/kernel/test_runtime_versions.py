"""What the runtime keeps of a stopped session: its log version, in a capped, compact map."""

from __future__ import annotations

import tracemalloc

import pytest

from praxo_actors.runtime._kernel._versions import StoppedVersions


def test_versions_only_move_forward() -> None:
    """A session's kept version is the highest it stopped at; one that never committed is not
    kept at all."""
    versions = StoppedVersions(10)
    versions.stopped("a", 0)
    assert len(versions) == 0 and versions.get("a") == 0
    versions.stopped("a", 3)
    versions.stopped("a", 2)  # e.g. a stop before a commit it made was applied
    assert versions.get("a") == 3 and versions.get("b") == 0 and len(versions) == 1


@pytest.mark.parametrize("kept", [1, 2, 3, 10, 101])
def test_the_cap_holds_and_the_newest_half_stays(kept: int) -> None:
    """Never more than ``kept`` entries; the last ``kept // 2`` sessions stopped (at least
    one) are always among them, however many stop."""
    versions = StoppedVersions(kept)
    newest = max(1, kept // 2)
    for i in range(5 * kept + 7):
        versions.stopped(f"s{i}", i + 1)
        assert len(versions) <= kept
        for j in range(max(0, i - newest + 1), i + 1):
            assert versions.get(f"s{j}") == j + 1
    assert versions.get("s0") == 0


def test_a_session_stopped_again_is_kept_as_recent() -> None:
    """A session that stops again moves to the newer half: it outlives sessions stopped once
    after its first stop."""
    versions = StoppedVersions(4)
    for name in ("old", "a", "b"):
        versions.stopped(name, 1)
    versions.stopped("old", 1)  # the same version again: still refreshed
    versions.stopped("c", 1)
    assert versions.get("old") == 1 and versions.get("a") == 0 and len(versions) == 3


def test_no_cap_keeps_nothing() -> None:
    """``kept=0`` turns the map off."""
    versions = StoppedVersions(0)
    versions.stopped("a", 5)
    assert len(versions) == 0 and versions.get("a") == 0


def test_an_entry_costs_under_200_bytes_whatever_the_id() -> None:
    """Measured on the heap: an entry costs the same for a 300-character id as for a short one,
    and under 200 bytes, with versions past the small-int cache and the map turning over."""
    ids = [f"tenant-{i:06d}/" + "x" * 300 for i in range(40_000)]
    versions = StoppedVersions(20_000)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i, session_id in enumerate(ids):
            versions.stopped(session_id, 1000 + i)
        used, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(versions) <= 20_000
    assert (used - before) / len(versions) < 200
    assert (peak - before) / len(versions) < 250  # a dict's resize holds old and new tables
