"""Helpers shared by the test folders: scripted models, sinks, replies, thread and log checks.

``tests/conftest.py`` is not in a package, so pytest (prepend import mode) puts ``tests/`` on
``sys.path`` when it loads that file, before any test module: every test imports this module as
``from _helpers import ...``.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from praxo_actors.models import Event, Request, Response, ToolCall, message_assistant, response

__all__ = [
    "Events",
    "Scripted",
    "assert_no_new_threads",
    "captured_logs",
    "leaked_threads",
    "log_events",
    "python_blocks",
    "say",
]

THREAD_TIMEOUT = 10.0

_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


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


def log_events(
    caplog: pytest.LogCaptureFixture,
    name_prefix: str,
    records: Iterable[logging.LogRecord] | None = None,
) -> list[dict[str, Any]]:
    """Return the event dicts logged under ``name_prefix`` (or its children), oldest first.

    Each is the record's event dict, bound fields included, plus the record's level as
    ``log_level`` (the key structlog's ``capture_logs`` uses).

    Args:
        caplog: The test's log capture.
        name_prefix: A logger name such as ``"supervisors"``.
        records: The records to look at; by default all that ``caplog`` holds.
    """
    found = []
    for record in caplog.records if records is None else records:
        if record.name != name_prefix and not record.name.startswith(f"{name_prefix}."):
            continue
        assert isinstance(record.msg, dict), f"not a structlog record: {record.msg!r}"
        found.append({**record.msg, "log_level": record.levelname.lower()})
    return found


@contextlib.contextmanager
def captured_logs(
    caplog: pytest.LogCaptureFixture, name_prefix: str, level: int = logging.DEBUG
) -> Iterator[list[dict[str, Any]]]:
    """Collect the event dicts logged under ``name_prefix`` at ``level`` and up inside the block.

    The list is filled when the block ends (see :func:`log_events`).
    """
    found: list[dict[str, Any]] = []
    with caplog.at_level(level, logger=name_prefix):
        start = len(caplog.records)
        yield found
    found.extend(log_events(caplog, name_prefix, caplog.records[start:]))


def python_blocks(text: str) -> list[tuple[int, str]]:
    """Return each ```python block of ``text`` with the line number its code starts on."""
    return [
        (text.count("\n", 0, match.start(1)) + 1, match.group(1))
        for match in _PYTHON_BLOCK.finditer(text)
    ]
