"""OpenTelemetry SDK providers that keep what they record in memory, for assertions."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["TIMEOUT", "Recorded", "points"]

TIMEOUT = 10.0


class _Ended(SpanProcessor):
    """Wake the threads waiting on ``ended`` each time a span has been exported."""

    def __init__(self, ended: threading.Condition) -> None:
        self.ended = ended

    def on_end(self, span: ReadableSpan) -> None:
        with self.ended:
            self.ended.notify_all()


class Recorded:
    """A tracer provider and a meter provider whose spans and metrics stay in memory."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        # Added after the exporter's processor, so a woken waiter finds the span exported.
        self.ended = threading.Condition()
        self.tracer_provider.add_span_processor(_Ended(self.ended))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def spans(self) -> list[ReadableSpan]:
        """Return the finished spans, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def span(self, name: str) -> ReadableSpan:
        """Return the one finished span called ``name``."""
        found = [s for s in self.spans() if s.name == name]
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {self.names()}"
        return found[0]

    def wait_for(
        self, done: Callable[[list[ReadableSpan]], bool], timeout: float = TIMEOUT
    ) -> list[ReadableSpan]:
        """Wait until ``done(spans)`` holds for the finished spans; return them.

        Raises:
            AssertionError: It does not hold within ``timeout`` seconds.
        """
        with self.ended:
            held = self.ended.wait_for(lambda: done(self.spans()), timeout)
        assert held, f"spans not as awaited within {timeout} s: {self.names()}"
        return self.spans()

    def wait_span(self, name: str, timeout: float = TIMEOUT) -> ReadableSpan:
        """Wait until a span called ``name`` has ended; return the one such span."""
        self.wait_for(lambda spans: any(s.name == name for s in spans), timeout)
        return self.span(name)

    def names(self) -> list[str]:
        """Return the finished spans' names, in the order they ended."""
        return [s.name for s in self.spans()]

    def metrics(self) -> dict[str, Any]:
        """Collect now; return each metric's data points by metric name."""
        out: dict[str, Any] = {}
        data = self.reader.get_metrics_data()
        if data is None:
            return out
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out[metric.name] = list(metric.data.data_points)
        return out

    def shutdown(self) -> None:
        """Shut both providers down."""
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


def points(metrics: dict[str, Any], name: str, **attributes: Any) -> list[Any]:
    """Return the data points of metric ``name`` whose attributes include ``attributes``."""
    wanted = {k.replace("__", "."): v for k, v in attributes.items()}
    return [
        p for p in metrics.get(name, []) if all(p.attributes.get(k) == v for k, v in wanted.items())
    ]
