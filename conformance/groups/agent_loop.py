"""Vector group ``agent_loop``: steps, tool calls, text calls, failures, fallback, events."""

from __future__ import annotations

from typing import Any

from conformance.groups._agent_cases import run_agent_case


def run_case(case: dict[str, Any]) -> None:
    """Run one agent-loop case; raise on any difference from the vector."""
    run_agent_case(case)
