"""``eventually``: a bounded wait for a condition, that says what it last saw when it fails."""

from __future__ import annotations

import itertools
import threading

import pytest

from praxo_actors.testing._eventually import eventually


def test_it_returns_the_first_true_value() -> None:
    """The predicate is read until it gives a true value, which is returned."""
    readings = itertools.count()
    assert eventually(lambda: max(next(readings) - 2, 0), interval=0) == 1


def test_it_waits_for_another_thread() -> None:
    """A value another thread sets is seen (the wait ends once it is there)."""
    box: list[str] = []
    writer = threading.Thread(target=box.append, args=("done",))
    writer.start()
    try:
        assert eventually(lambda: box) == ["done"]
    finally:
        writer.join(10)


def test_a_timeout_names_the_wait_and_the_last_value() -> None:
    """A condition that never holds fails within its timeout, with what it waited for and
    the predicate's last value."""
    with pytest.raises(AssertionError) as info:
        eventually(lambda: [], timeout=0.05, what="a list with something in it")
    assert str(info.value) == "a list with something in it: not within 0.05 s (last: [])"


def test_a_lambda_is_named_by_its_source() -> None:
    """With no ``what``, a lambda's failure shows its source line."""
    with pytest.raises(AssertionError, match=r"eventually\(lambda: 0 > 1, timeout=0\)"):
        eventually(lambda: 0 > 1, timeout=0)


def test_an_assertion_in_the_predicate_means_not_yet() -> None:
    """A predicate that asserts is read again; its last assertion is in the failure."""
    readings = itertools.count()

    def settled() -> bool:
        n = next(readings)
        assert n >= 3, f"only {n} readings"
        return True

    assert eventually(settled, interval=0) is True

    def never() -> bool:
        raise AssertionError("still 0")

    with pytest.raises(AssertionError, match=r"never: .*AssertionError: still 0"):
        eventually(never, timeout=0)


def test_other_errors_propagate_at_once() -> None:
    """An error that is not an assertion is not waited out."""
    calls = itertools.count()

    def broken() -> bool:
        next(calls)
        raise KeyError("gone")

    with pytest.raises(KeyError):
        eventually(broken, timeout=10)
    assert next(calls) == 1
