"""The caller's trace context, carried from where a hosted run is asked for to its span.

A run the runtime hosts starts on a session actor's thread, where the OpenTelemetry context
of the code that asked for it (its current span) is not current. The runtime's front
:func:`capture`\\ s that context under the run's id when the run is asked for (``run``,
``arun``, ``submit``, ``astream``); the run's ``invoke_agent`` span :func:`take`\\ s it as its
parent. A cluster carries it between processes as a W3C ``traceparent``
(:func:`traceparent`, :func:`attached`).

Nothing is done while OpenTelemetry is not imported, nor kept when no span is current. A run
that never starts (refused, cancelled first) leaves its entry behind: at most :data:`KEPT` are
kept, the oldest dropped first.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["KEPT", "attached", "capture", "take", "traceparent"]

KEPT = 4096
_parents: dict[str, Any] = {}
_lock = threading.Lock()
_modules = sys.modules
_api: tuple[Any, Any] | None = None  # (context.get_current, trace.get_current_span), once loaded


def _load() -> tuple[Any, Any]:
    global _api
    from opentelemetry import context, trace

    _api = (context.get_current, trace.get_current_span)
    return _api


def capture(run_id: str) -> None:
    """Keep the current context for run ``run_id`` if a span is current in it."""
    if "opentelemetry.trace" not in _modules:  # not imported: no span can be current
        return
    api = _api or _load()
    current = api[0]()
    if not api[1](current).get_span_context().is_valid:
        return
    with _lock:
        _parents[run_id] = current
        while len(_parents) > KEPT:
            del _parents[next(iter(_parents))]


def take(run_id: str) -> Any:
    """Return (and forget) the context captured for run ``run_id``; None if none was."""
    if not _parents:
        return None
    with _lock:
        return _parents.pop(run_id, None)


def traceparent() -> str | None:
    """Return the W3C ``traceparent`` of the current span (None: none is current)."""
    if "opentelemetry.trace" not in _modules:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return carrier.get("traceparent")


@contextmanager
def attached(parent: str | None) -> Iterator[None]:
    """Make the span a ``traceparent`` names the current one within the block (None: no-op)."""
    if not parent:
        yield
        return
    from opentelemetry import context
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    token = context.attach(TraceContextTextMapPropagator().extract({"traceparent": parent}))
    try:
        yield
    finally:
        context.detach(token)
