"""Run ids: unique within a process, across threads, and across a fork."""

from __future__ import annotations

import multiprocessing
import re
import subprocess
import sys
import threading

import pytest

from praxo_actors.agent import new_run_id

PATTERN = re.compile(r"^run_([0-9a-f]+)_([0-9a-f]{16})_(\d+)$")


def _ids_in_child(count: int, queue: multiprocessing.Queue[list[str]]) -> None:
    queue.put([new_run_id() for _ in range(count)])


def test_format() -> None:
    """An id holds time, a 64-bit random part and a counter."""
    match = PATTERN.match(new_run_id())
    assert match is not None


def test_many_ids_are_unique() -> None:
    """Fifty thousand ids drawn in a row are all distinct."""
    ids = [new_run_id() for _ in range(50_000)]
    assert len(set(ids)) == len(ids)


def test_ids_from_threads_are_unique() -> None:
    """Ids drawn concurrently from four threads are all distinct."""
    out: list[list[str]] = [[] for _ in range(4)]

    def draw(slot: list[str]) -> None:
        slot.extend(new_run_id() for _ in range(5_000))

    threads = [threading.Thread(target=draw, args=(slot,)) for slot in out]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive()
    ids = [i for slot in out for i in slot]
    assert len(ids) == 20_000 and len(set(ids)) == 20_000


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method"
)
def test_forked_child_draws_a_new_random_part() -> None:
    """A forked child gets its own random part, so its ids never repeat the parent's."""
    ctx = multiprocessing.get_context("fork")
    parent_before = new_run_id()
    queue: multiprocessing.Queue[list[str]] = ctx.Queue()
    child = ctx.Process(target=_ids_in_child, args=(1000, queue))
    child.start()
    child_ids = queue.get(timeout=30)
    child.join(timeout=30)
    assert child.exitcode == 0
    parent_ids = [new_run_id() for _ in range(1000)]
    parent_node = PATTERN.match(parent_before).group(2)  # type: ignore[union-attr]
    child_nodes = {PATTERN.match(i).group(2) for i in child_ids}  # type: ignore[union-attr]
    assert child_nodes != {parent_node} and len(child_nodes) == 1
    assert not set(child_ids) & set(parent_ids)


def test_another_interpreter_draws_distinct_ids() -> None:
    """A separate interpreter draws ids with another random part and none of ours."""
    code = "from praxo_actors.agent import new_run_id; print(*(new_run_id() for _ in range(500)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    theirs = out.stdout.split()
    ours = [new_run_id() for _ in range(500)]
    assert len(theirs) == 500
    assert {PATTERN.match(i).group(2) for i in theirs} != {  # type: ignore[union-attr]
        PATTERN.match(ours[0]).group(2)  # type: ignore[union-attr]
    }
    assert not set(theirs) & set(ours)
