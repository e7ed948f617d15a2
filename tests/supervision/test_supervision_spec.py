"""ChildSpec validation and the manual clock."""

from __future__ import annotations

from typing import Any

import pytest
from _supervision_helpers import Worker

from supervisors import ChildSpec, ManualClock, SupervisorError


def test_defaults_follow_otp() -> None:
    """A spec defaults to a permanent worker with a 5 s shutdown, not significant."""
    spec = ChildSpec("child1", Worker.start)
    assert (spec.restart, spec.type, spec.shutdown, spec.significant) == (
        "permanent",
        "worker",
        5.0,
        False,
    )


@pytest.mark.parametrize(
    "fields",
    [
        {"id": 1},
        {"start": "not callable"},
        {"restart": "prmanent"},
        {"type": "wrker"},
        {"shutdown": -10},
        {"shutdown": 0},
        {"shutdown": True},
        {"shutdown": float("nan")},
        {"start_timeout": 0},
        {"significant": "yes"},
        {"restart": "permanent", "significant": True},
    ],
)
def test_invalid_values_are_rejected(fields: dict[str, Any]) -> None:
    """Each bad field raises SUPERVISOR_INVALID_SPEC at construction (OTP child_specs)."""
    values: dict[str, Any] = {"id": "child", "start": Worker.start, **fields}
    with pytest.raises(SupervisorError) as invalid:
        ChildSpec(**values)
    assert invalid.value.code == "SUPERVISOR_INVALID_SPEC"


@pytest.mark.parametrize(
    "fields",
    [
        {"restart": "temporary", "shutdown": 1},
        {"restart": "transient", "significant": True},
        {"type": "supervisor", "shutdown": 60.0},
    ],
)
def test_valid_values_are_accepted(fields: dict[str, Any]) -> None:
    """Well-formed specs are accepted and keep their values."""
    spec = ChildSpec("child", Worker.start, **fields)
    assert all(getattr(spec, name) == value for name, value in fields.items())


def test_spec_is_frozen() -> None:
    """A spec cannot be changed after it is made."""
    spec = ChildSpec("child", Worker.start)
    with pytest.raises(AttributeError):
        spec.restart = "temporary"  # type: ignore[misc]


def test_manual_clock_moves_only_when_advanced() -> None:
    """A manual clock reads the same until advanced, then moves by exactly that much."""
    clock = ManualClock(10.0)
    assert clock() == clock() == 10.0
    clock.advance(2.5)
    assert clock() == 12.5


@pytest.mark.parametrize("seconds", [-1.0, float("nan"), float("inf")])
def test_manual_clock_never_goes_back(seconds: float) -> None:
    """Advancing by a negative or non-finite amount is refused."""
    clock = ManualClock()
    with pytest.raises(SupervisorError) as invalid:
        clock.advance(seconds)
    assert invalid.value.code == "SUPERVISOR_INVALID_SPEC"
    assert clock() == 0.0
