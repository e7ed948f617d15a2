"""Opt-in middleware for the agent loop: tool selection, structured output, limits, compaction,
approvals.

Each is a frozen settings record set on :class:`~praxo_actors.agent.AgentOptions`; the loop in
:mod:`praxo_actors.agent` applies it. PII redaction is the boolean option ``pii``.
"""

from __future__ import annotations

from praxo_actors.middleware._approval import Approval, require_approval
from praxo_actors.middleware._call_limit import CallLimit, call_limit
from praxo_actors.middleware._compaction import Compaction, Summarizer, compaction
from praxo_actors.middleware._structured_output import (
    Repairer,
    StructuredOutput,
    apply_structured,
    structured_output,
)
from praxo_actors.middleware._tool_selection import ToolSelection, tool_selection

__all__ = [
    "Approval",
    "CallLimit",
    "Compaction",
    "Repairer",
    "StructuredOutput",
    "Summarizer",
    "ToolSelection",
    "apply_structured",
    "call_limit",
    "compaction",
    "require_approval",
    "structured_output",
    "tool_selection",
]
