"""Helpers shared by the test folders: scripted models, an event sink, replies, thread checks.

``tests/conftest.py`` is not in a package, so pytest (prepend import mode) puts ``tests/`` on
``sys.path`` when it loads that file, before any test module: every test imports this module as
``from _helpers import ...``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from praxo_actors.models import Event, Request, Response, ToolCall, message_assistant, response

__all__ = ["Events", "Scripted", "assert_no_new_threads", "leaked_threads", "say"]

THREAD_TIMEOUT = 10.0


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


def say(text: str, *calls: ToolCall) -> Response:
    """Return a model response whose assistant message has ``text`` and ``calls``."""
    return response(message_assistant(text, calls))


def leaked_threads(before: Iterable[threading.Thread], timeout: float) -> list[str]:
    """Return the sorted names of threads not in ``before`` still alive after ``timeout`` seconds.

    Args:
        before: The threads that were running before the code under test started.
        timeout: The total time to wait for the new threads to end.
    """
    known = set(before)
    deadline = time.monotonic() + timeout
    for thread in set(threading.enumerate()) - known:
        thread.join(max(deadline - time.monotonic(), 0.0))
    return sorted(t.name for t in set(threading.enumerate()) - known if t.is_alive())


def assert_no_new_threads(
    before: Iterable[threading.Thread], timeout: float = THREAD_TIMEOUT
) -> None:
    """Fail if a thread not in ``before`` is still alive after ``timeout`` seconds.

    Raises:
        AssertionError: If a new thread outlives the timeout; the message names it.
    """
    leaked = leaked_threads(before, timeout)
    assert leaked == [], f"threads left running: {leaked}"
