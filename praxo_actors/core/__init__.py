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

# Each helper module adds its import line below and its names to __all__.

__all__ = [
    "CheckpointError",
    "CompactionError",
    "JSONError",
    "PathPolicyError",
    "PraxoError",
    "ToolCallError",
]
