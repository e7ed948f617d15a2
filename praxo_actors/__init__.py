"""praxo-actors: host LLM agents inside Python services.

The pure Core lives in :mod:`praxo_actors.core`, the agent loop in :mod:`praxo_actors.agent`
and :mod:`praxo_actors.middleware`, the memory store in :mod:`praxo_actors.memory`, the M:N
actor executor in :mod:`praxo_actors.actors`, and the actor runtime in
:mod:`praxo_actors.runtime`. Every error this package defines is a :class:`PraxoError` with a
stable ``.code``.

:class:`Runtime` is imported on first use, so ``import praxo_actors.core`` (or ``.models``,
``.agent``) loads neither the runtime nor Pykka nor asyncio.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

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
from praxo_actors._version import __version__

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime

logging.getLogger("praxo_actors").addHandler(logging.NullHandler())  # a library stays silent

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


# Public names whose modules are imported on first access (PEP 562): the runtime pulls in
# Pykka, asyncio, sqlite3 and structlog, about 180 ms that a user of the pure Core never needs.
_LAZY = {"Runtime": "praxo_actors.runtime"}


def __getattr__(name: str) -> Any:
    """Import a lazily exported name on first access and keep it in the module."""
    modname = _LAZY.get(name)
    if modname is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(modname), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
