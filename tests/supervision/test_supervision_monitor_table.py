"""The monitors' callback table: each Down reaches only its own monitors, and nothing is left."""

from __future__ import annotations

from typing import Any

from _supervision_helpers import Worker, stop

from supervisors import Down, _monitor, monitor


def test_each_down_reaches_only_its_own_live_monitors() -> None:
    """Monitors of three actors, some cancelled: each callback gets its actor's Down only."""
    refs = [Worker.start(f"w{i}") for i in range(3)]
    got: dict[tuple[int, int], list[Any]] = {}
    monitors = {}
    for i, ref in enumerate(refs):
        for j in range(5):

            def record(down: Down, at: tuple[int, int] = (i, j)) -> None:
                got.setdefault(at, []).append(down.ref)

            monitors[i, j] = monitor(ref, record)
    cancelled = {(0, 1), (1, 0), (2, 4), (1, 3)}
    for at in cancelled:
        assert monitors[at].cancel()
    assert not monitors[0, 1].cancel()  # a second cancel finds nothing
    for ref in refs:
        stop(ref)
    expected = {(i, j): [refs[i]] for i in range(3) for j in range(5) if (i, j) not in cancelled}
    assert got == expected
    assert not any(m.cancel() for m in monitors.values())  # delivered: nothing to cancel


def test_a_stopped_actor_leaves_no_callback_behind() -> None:
    """Once every watched actor has stopped, the table holds none of their callbacks."""
    before = len(_monitor._callbacks)
    refs = [Worker.start(f"w{i}") for i in range(4)]
    for ref in refs:
        for _ in range(3):
            monitor(ref, lambda _down: None)
    assert len(_monitor._callbacks) == before + 12
    for ref in refs:
        stop(ref)
    assert len(_monitor._callbacks) == before
