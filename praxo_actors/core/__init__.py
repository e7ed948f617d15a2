"""Pure helpers of the Praxo Core: JSON, tool calls, schema, paths, PII, checkpoints, compaction.

Nothing here starts a thread, touches the clock or does I/O (except
``PathPolicy(resolve_symlinks=True)``, which reads symlinks by request).
"""

from __future__ import annotations

from praxo_actors._errors import (
    CheckpointError,
    CompactionError,
    JSONError,
    PathPolicyError,
    PraxoError,
    ToolCallError,
)
from praxo_actors.core._checkpoint import (
    DEFAULT_CHECKPOINT_TYPES,
    dump_checkpoint,
    load_checkpoint,
)
from praxo_actors.core._compaction import (
    SUMMARY_PREFIX,
    CompactionPlan,
    apply_compaction,
    compact_messages,
    default_summary,
    estimate_tokens,
    plan_compaction,
)
from praxo_actors.core._formats._models import tool_call_format_for
from praxo_actors.core._formats._names import tool_call_formats
from praxo_actors.core._json import encode_json, extract_json, parse_json
from praxo_actors.core._paths import PathPolicy
from praxo_actors.core._pii import redact_pii, redact_value
from praxo_actors.core._schema import SchemaError, validate_schema
from praxo_actors.core._toolcalls import parse_tool_call, parse_tool_calls, strip_tool_calls

__all__ = [
    "DEFAULT_CHECKPOINT_TYPES",
    "SUMMARY_PREFIX",
    "CheckpointError",
    "CompactionError",
    "CompactionPlan",
    "JSONError",
    "PathPolicy",
    "PathPolicyError",
    "PraxoError",
    "SchemaError",
    "ToolCallError",
    "apply_compaction",
    "compact_messages",
    "default_summary",
    "dump_checkpoint",
    "encode_json",
    "estimate_tokens",
    "extract_json",
    "load_checkpoint",
    "parse_json",
    "parse_tool_call",
    "parse_tool_calls",
    "plan_compaction",
    "redact_pii",
    "redact_value",
    "strip_tool_calls",
    "tool_call_format_for",
    "tool_call_formats",
    "validate_schema",
]
