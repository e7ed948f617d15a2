"""Fixtures for agent-loop tests: scripted models and an event-collecting sink."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from praxo_actors.models import Event, Request


class Scripted:
    """A model that returns its replies in order (calling those that are callables)."""

    def __init__(self, replies: tuple[Any, ...]) -> None:
        self.replies = replies
        self.requests: list[Request] = []

    def __call__(self, request: Request) -> Any:
        self.requests.append(request)
        reply = self.replies[len(self.requests) - 1]
        return reply(request) if callable(reply) else reply


class Events(list[Event]):
    """A sink that keeps every event."""

    def __call__(self, event: Event) -> None:
        self.append(event)

    def types(self) -> list[str]:
        """Return the event types in order."""
        return [e.type for e in self]


@pytest.fixture
def scripted() -> Callable[..., Scripted]:
    """Return a factory of scripted models."""
    return lambda *replies: Scripted(replies)


@pytest.fixture
def events() -> Events:
    """Return a fresh event-collecting sink."""
    return Events()
