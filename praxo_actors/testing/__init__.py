"""Helpers for testing code that uses praxo-actors: scripted models, an event recorder, a clock.

The pytest plugin registered by this package (entry point ``praxo_actors``) adds the
fixtures ``scripted_model_factory``, ``memory_store``, ``sqlite_store`` and ``event_recorder``.

Every model here is a sync callable for ``run_agent``; its ``acall`` method is the
``async def`` twin for ``arun_agent``. Both record each request in ``model.requests``.
:class:`ManualClock` drives a runtime's deadlines and timeouts (``Runtime.start(clock=...)``).
"""

from __future__ import annotations

from praxo_actors.testing._clock import ManualClock
from praxo_actors.testing._models import (
    EchoModel,
    FunctionModel,
    ModelReply,
    PerSessionModel,
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
    "ManualClock",
    "ModelReply",
    "PerSessionModel",
    "ScriptExhaustedError",
    "ScriptItem",
    "ScriptedModel",
    "to_reply",
]
