"""Helpers for testing code that uses praxo-actors: scripted models and an event recorder.

The pytest plugin registered by this package (entry point ``praxo_actors``) adds the
fixtures ``scripted_model_factory``, ``memory_store``, ``sqlite_store`` and ``event_recorder``.

Every model here is a sync callable for ``run_agent``; its ``acall`` method is the
``async def`` twin for ``arun_agent``. Both record each request in ``model.requests``.
"""

from __future__ import annotations

from praxo_actors.testing._models import (
    EchoModel,
    FunctionModel,
    ModelReply,
    ScriptedModel,
    ScriptExhaustedError,
    ScriptItem,
    to_reply,
)
from praxo_actors.testing._recorder import EventRecorder

__all__ = [
    "EchoModel",
    "EventRecorder",
    "FunctionModel",
    "ModelReply",
    "ScriptExhaustedError",
    "ScriptItem",
    "ScriptedModel",
    "to_reply",
]
