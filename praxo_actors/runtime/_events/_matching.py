"""The matching of events to subscriptions: a glob on the event type and a session filter."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable
from typing import Any

import pykka

from praxo_actors._errors import PraxoError
from praxo_actors.codes import EVENTS_INVALID_SUBSCRIPTION
from praxo_actors.models import Event

__all__ = ["EventFilter", "check_subscription"]


@functools.lru_cache(maxsize=256)
def _compile(pattern: str) -> Callable[[str], Any]:
    # Cached: many subscriptions share a few patterns ("*", "run.*"), and a stream is made per
    # request in a service.
    return re.compile(fnmatch.translate(pattern)).match


class EventFilter:
    """Match events by a glob on their type (``"run.*"``, ``"*"``) and, optionally, a session."""

    __slots__ = ("_match", "pattern", "session_id")

    def __init__(self, pattern: str, session_id: str | None) -> None:
        self.pattern = pattern
        self.session_id = session_id
        self._match = _compile(pattern)

    def __call__(self, event: Event) -> bool:
        """Return whether ``event`` passes the pattern and the session filter."""
        if self.session_id is not None and event.session_id != self.session_id:
            return False
        return self._match(event.type) is not None


def check_subscription(target: object, pattern: object, session_id: object, buffer: object) -> None:
    """Refuse a subscription's bad arguments.

    Raises:
        PraxoError: ``EVENTS_INVALID_SUBSCRIPTION``.
    """
    if not (callable(target) or isinstance(target, pykka.ActorRef)):
        raise PraxoError(EVENTS_INVALID_SUBSCRIPTION, "subscriber must be callable or an ActorRef")
    if not isinstance(pattern, str) or not pattern:
        raise PraxoError(EVENTS_INVALID_SUBSCRIPTION, "pattern must be a non-empty str")
    if session_id is not None and not isinstance(session_id, str):
        raise PraxoError(EVENTS_INVALID_SUBSCRIPTION, "session_id must be a str or None")
    if isinstance(buffer, bool) or not isinstance(buffer, int):
        raise PraxoError(EVENTS_INVALID_SUBSCRIPTION, "buffer must be an int")
    if buffer < 1:
        raise PraxoError(EVENTS_INVALID_SUBSCRIPTION, "buffer must be at least 1")
