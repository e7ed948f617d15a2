"""Tool-call group: ``parse_tool_calls``, ``parse_tool_call`` and ``strip_tool_calls``.

A case has ``op``, ``input`` and ``expect`` or ``error``. Calls are compared as
``{"name", "arguments", "id"}`` objects, arguments strictly (an integer never equals a float).
A ``parse_tool_calls`` case may also give ``stripped``: what ``strip_tool_calls`` returns for the
same input.
"""

from __future__ import annotations

from typing import Any

from conformance._runner import CaseFailure, expect_outcome
from conformance.groups.json import same_json
from praxo_actors.core import parse_tool_call, parse_tool_calls, strip_tool_calls
from praxo_actors.models import ToolCall


def run_case(case: dict[str, Any]) -> None:
    """Run one tool-call case; raise on mismatch."""
    op, text = case["op"], case["input"]
    if op == "parse_tool_calls":
        result = expect_outcome(case, lambda: [_plain(call) for call in parse_tool_calls(text)])
    elif op == "parse_tool_call":
        result = expect_outcome(case, lambda: _plain(parse_tool_call(text)))
    elif op == "strip_tool_calls":
        result = expect_outcome(case, lambda: strip_tool_calls(text))
    else:
        raise CaseFailure(f"unknown op {op!r}")
    if "expect" in case and not same_json(result, case["expect"]):
        raise CaseFailure(f"expected {case['expect']!r}, got {result!r} (types differ)")
    if "stripped" in case:
        stripped = strip_tool_calls(text)
        if stripped != case["stripped"]:
            raise CaseFailure(f"stripped: expected {case['stripped']!r}, got {stripped!r}")


def _plain(call: ToolCall) -> dict[str, Any]:
    return {"name": call.name, "arguments": call.arguments, "id": call.id}
