"""Tool-call formats group: the tool-call cases again, each with a ``format`` (SPEC §13).

A case has ``format`` (a name, ``"auto"`` or null), ``op``, ``input`` and ``expect`` or
``error``, and may give ``stripped`` as the tool-call group does.
"""

from __future__ import annotations

from typing import Any

from conformance._runner import CaseFailure, expect_outcome
from conformance.groups.json import same_json
from praxo_actors.core import parse_tool_call, parse_tool_calls, strip_tool_calls
from praxo_actors.models import ToolCall


def run_case(case: dict[str, Any]) -> None:
    """Run one case in its format; raise on mismatch."""
    op, text, fmt = case["op"], case["input"], case["format"]
    if op == "parse_tool_calls":
        result = expect_outcome(
            case, lambda: [_plain(call) for call in parse_tool_calls(text, format=fmt)]
        )
    elif op == "parse_tool_call":
        result = expect_outcome(case, lambda: _plain(parse_tool_call(text, format=fmt)))
    elif op == "strip_tool_calls":
        result = expect_outcome(case, lambda: strip_tool_calls(text, format=fmt))
    else:
        raise CaseFailure(f"unknown op {op!r}")
    if "expect" in case and not same_json(result, case["expect"]):
        raise CaseFailure(f"expected {case['expect']!r}, got {result!r} (types differ)")
    if "stripped" in case:
        stripped = strip_tool_calls(text, format=fmt)
        if stripped != case["stripped"]:
            raise CaseFailure(f"stripped: expected {case['stripped']!r}, got {stripped!r}")


def _plain(call: ToolCall) -> dict[str, Any]:
    return {"name": call.name, "arguments": call.arguments, "id": call.id}
