"""Vector group ``middleware``: tool selection, PII, structured output, call limits, compaction."""

from __future__ import annotations

from typing import Any

from conformance.groups._agent_cases import run_agent_case, run_apply_structured_case


def run_case(case: dict[str, Any]) -> None:
    """Run one middleware case (a whole run, or ``apply_structured`` on its own)."""
    if "text" in case:
        run_apply_structured_case(case)
    else:
        run_agent_case(case)
