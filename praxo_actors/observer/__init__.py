"""The observer: a page, served by an ASGI app, that shows a runtime at work.

``observer_app(runtime)`` returns a Starlette app to mount in a host service (extra
``observer``). Its page shows the supervision tree, the live and passivated sessions (sortable,
paged, each one inspectable, stopped or passivated), the recent runs and their timelines, the
pending approvals (approve, deny), the event stream live over server-sent events, and the
runtime's counters over 15 minutes with a run-latency histogram; the ``/api/*`` routes return
the same data as JSON. It answers only the Host it is served on, and acts only on a same-origin
``POST`` carrying the page's token. See docs/how-to/observability.md.
"""

from __future__ import annotations

from praxo_actors.observer._app import observer_app
from praxo_actors.observer._latency import BUCKETS_MS, Latency
from praxo_actors.observer._serve import ObserverServer

__all__ = ["BUCKETS_MS", "Latency", "ObserverServer", "observer_app"]
