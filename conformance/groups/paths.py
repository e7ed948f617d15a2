"""Paths group: ``PathPolicy(roots, deny).check(path, base)``.

A case has ``roots``, ``deny``, ``path`` and ``base`` (``null``: the first root), and ``expect``
(the normalised path) or ``error`` (a code). Building the policy is part of the case, so invalid
roots or deny patterns are errors too.
"""

from __future__ import annotations

from typing import Any

from conformance._runner import expect_outcome
from praxo_actors.core import PathPolicy


def run_case(case: dict[str, Any]) -> None:
    """Run one path case; raise on mismatch."""
    expect_outcome(
        case, lambda: PathPolicy(case["roots"], case["deny"]).check(case["path"], case["base"])
    )
