"""The monitors' callback table: each Down reaches only its own monitors, and nothing is left."""

from __future__ import annotations

from typing import Any

from _supervision_helpers import Worker, stop

from supervisors import Down, _monitor, _watch, monitor


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
    before = len(_watch._callbacks)
    refs = [Worker.start(f"w{i}") for i in range(4)]
    for ref in refs:
        for _ in range(3):
            monitor(ref, lambda _down: None)
    assert len(_watch._callbacks) == before + 12
    for ref in refs:
        stop(ref)
    assert len(_watch._callbacks) == before


def test_monitors_past_two_to_the_32_on_one_actor_keep_apart() -> None:
    """Monitors whose keys pass 2**32 on one actor are delivered and cancelled like any other."""
    first, second = Worker.start("first"), Worker.start("second")
    got: list[tuple[str, Any]] = []
    assert monitor(first, lambda _down: None).cancel()  # makes the watch
    watch = getattr(compat_actor(first), _monitor._WATCH)
    watch.low = watch.next_key = 2**32 - 1
    kept = monitor(first, lambda down: got.append(("first", down.ref)))
    dropped = monitor(first, lambda down: got.append(("dropped", down.ref)))
    late = monitor(first, lambda down: got.append(("late", down.ref)))
    other = monitor(second, lambda down: got.append(("second", down.ref)))
    assert dropped.cancel() and not dropped.cancel()
    stop(second)
    assert got == [("second", second)] and not other.cancel()
    stop(first)
    assert got == [("second", second), ("first", first), ("late", first)]
    assert not kept.cancel() and not late.cancel()


def test_slots_of_different_watches_never_meet() -> None:
    """A key past 2**32 on one watch is not the next watch's key 0, nor any other slot."""
    slots = {_watch._slot(s, k) for s in range(3) for k in (0, 1, 2**32 - 1, 2**32, 2**33 + 1)}
    assert len(slots) == 15


def compat_actor(ref: Any) -> Any:
    """Return the actor behind ``ref`` (alive)."""
    from supervisors import _pykka_compat

    return _pykka_compat.actor_of(ref)
