"""PII group: ``redact_pii`` on text, ``redact_value`` on JSON values.

A case holds ``text`` (run through ``redact_pii``) or ``value`` (run through ``redact_value``), and
the ``expect``-ed result. Every case also checks that a second pass changes nothing.
"""

from __future__ import annotations

from typing import Any

from conformance._runner import CaseFailure, expect_outcome
from praxo_actors.core import redact_pii, redact_value


def run_case(case: dict[str, Any]) -> None:
    """Run one PII case; raise on mismatch."""
    if "text" in case:
        result = expect_outcome(case, lambda: redact_pii(case["text"]))
        again = redact_pii(result)
    else:
        result = expect_outcome(case, lambda: redact_value(case["value"]))
        again = redact_value(result)
    if again != result:
        raise CaseFailure(f"not idempotent: {result!r} -> {again!r}")
