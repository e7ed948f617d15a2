"""praxo-actors: host LLM agents inside Python services.

The pure Core lives in :mod:`praxo_actors.core`, the agent loop in :mod:`praxo_actors.agent`
and :mod:`praxo_actors.middleware`, the memory store in :mod:`praxo_actors.memory`, and the
actor runtime in :mod:`praxo_actors.runtime`. Every error this package defines is a
:class:`PraxoError` with a stable ``.code``.
"""

from __future__ import annotations

from praxo_actors._errors import (
    AgentError,
    CheckpointError,
    CompactionError,
    JSONError,
    MemoryStoreError,
    PathPolicyError,
    PraxoError,
    ProtocolError,
    RuntimeLimitError,
    SchedulerClosedError,
    SessionBusyError,
    SessionOverloadedError,
    ToolCallError,
)
from praxo_actors.runtime import Runtime

__all__ = [
    "AgentError",
    "CheckpointError",
    "CompactionError",
    "JSONError",
    "MemoryStoreError",
    "PathPolicyError",
    "PraxoError",
    "ProtocolError",
    "Runtime",
    "RuntimeLimitError",
    "SchedulerClosedError",
    "SessionBusyError",
    "SessionOverloadedError",
    "ToolCallError",
    "__version__",
]

__version__ = "0.1.0"
