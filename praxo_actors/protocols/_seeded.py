"""A model that sees a conversation before a new session's own: an OpenAI request's history.

An OpenAI client without a session sends the whole conversation each time. Its earlier
messages go to the model, before the session's own, on every step of the session's runs
while they are registered in ``seeds`` (the app removes them when the run ends); the session
stores only what its runs add.
"""

from __future__ import annotations

from typing import Any

import msgspec

from praxo_actors.agent import FallbackModel, Model
from praxo_actors.models import Message, Request

__all__ = ["seeded"]


class _Seeded:
    """Call ``model`` with the seed of the request's session put before its messages."""

    __slots__ = ("__wrapped__", "model", "seeds")

    def __init__(self, model: Model, seeds: dict[str, list[Message]]) -> None:
        self.model = model
        self.__wrapped__ = model  # telemetry names the model inside
        self.seeds = seeds

    def __call__(self, request: Request) -> Any:
        seed = self.seeds.get(request.session_id)
        if seed:
            messages = request.messages
            at = 0
            while at < len(messages) and messages[at].role == "system":
                at += 1
            merged = [*messages[:at], *seed, *messages[at:]]
            request = msgspec.structs.replace(request, messages=merged)
        return self.model(request)


def seeded(model: Model, seeds: dict[str, list[Message]]) -> Model:
    """Return ``model`` (each attempt of a fallback) seeing the seeds of its sessions."""
    if isinstance(model, FallbackModel):
        return FallbackModel(seeded(model.primary, seeds), seeded(model.fallback, seeds))
    return _Seeded(model, seeds)
