"""The tracer and the two GenAI histograms of one pair of OpenTelemetry providers.

Imported, as :mod:`~praxo_actors.agent._tracing` is, only when a provider is configured.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import metrics, trace

from praxo_actors._version import __version__

__all__ = ["DURATION", "SCOPE", "TOKENS", "Telemetry"]

SCOPE = "praxo_actors"
DURATION = "gen_ai.client.operation.duration"
TOKENS = "gen_ai.client.token.usage"
# The bucket boundaries the GenAI semantic conventions recommend for these two histograms.
_DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48)
_TOKEN_BUCKETS = tuple(float(4**k) for k in range(14))


class Telemetry:
    """The tracer and the instruments of one pair of providers (either may be None)."""

    __slots__ = ("duration", "tokens", "tracer")

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        self.tracer: trace.Tracer | None = (
            None if tracer_provider is None else tracer_provider.get_tracer(SCOPE, __version__)
        )
        self.duration: metrics.Histogram | None = None
        self.tokens: metrics.Histogram | None = None
        if meter_provider is not None:
            meter = meter_provider.get_meter(SCOPE, __version__)
            self.duration = meter.create_histogram(
                DURATION,
                unit="s",
                description="GenAI operation duration",
                explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
            )
            self.tokens = meter.create_histogram(
                TOKENS,
                unit="{token}",
                description="Number of input and output tokens used",
                explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
            )
