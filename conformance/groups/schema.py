"""Schema group: ``validate_schema`` on a ``schema`` and a ``value``.

``expect`` lists the errors as ``{"path", "keyword"}`` objects in the order they are returned;
messages are for people and are not compared.
"""

from __future__ import annotations

from typing import Any

from conformance._runner import expect_outcome
from praxo_actors.core import SchemaError, validate_schema


def run_case(case: dict[str, Any]) -> None:
    """Run one schema case; raise on mismatch."""
    expect_outcome(case, lambda: validate_schema(case["schema"], case["value"]), _located)


def _located(errors: list[SchemaError]) -> list[dict[str, str]]:
    return [{"path": e.path, "keyword": e.keyword} for e in errors]
