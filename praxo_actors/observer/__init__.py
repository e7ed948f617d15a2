"""The observer: a page, served by an ASGI app, that shows a runtime at work.

``observer_app(runtime)`` returns a Starlette app to mount in a host service (extra
``observer``). Its page shows the supervision tree, the live and passivated sessions (sortable,
each one inspectable), the event stream live over server-sent events, the runtime's counters
and a run-latency histogram; ``GET /api/state`` returns the same data as JSON. See
docs/observability.md.
"""

from __future__ import annotations

from praxo_actors.observer._app import observer_app
from praxo_actors.observer._latency import BUCKETS_MS, Latency
from praxo_actors.observer._serve import ObserverServer

__all__ = ["BUCKETS_MS", "Latency", "ObserverServer", "observer_app"]
