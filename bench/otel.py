"""Benchmark what OpenTelemetry costs a run (not a test).

    python bench/otel.py            # ~1 min on 2 vCPUs
    python bench/otel.py --quick    # a smoke run of seconds

Prints, side by side and interleaved (best of N, so a burst of load on a shared machine slows
one batch, not one variant), the time per ``run_agent`` run of a one-step run (the cheapest, so
the largest relative overhead) and of a ten-step run with nine tool calls:

1. *before*: ``start_run`` as it was before tracing existed (no provider check at all);
2. *no provider*: the library as it is, OpenTelemetry not loaded [target: <= 2 % over before];
3. *no provider, OTel loaded*: the API imported but no global provider set [same target];
4. *SDK tracer*: an SDK ``TracerProvider`` whose spans go to an in-memory exporter;
5. *SDK tracer + meter*: the same plus an SDK ``MeterProvider`` with an in-memory reader.

Sections 3-5 import OpenTelemetry, which cannot be unloaded, so 1-2 are measured first.
"""

from __future__ import annotations

import argparse
import gc
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import praxo_actors.agent._drivers as drivers
from praxo_actors.agent import AgentOptions, AgentRun, Tool, new_agent_options, run_agent
from praxo_actors.agent._machine import machine
from praxo_actors.agent._runid import new_run_id
from praxo_actors.models import (
    Message,
    Request,
    Response,
    Session,
    ToolCall,
    message_assistant,
    response,
    session,
)


def replies(steps: int) -> list[Response]:
    """Return a run's replies: a tool call on every step but the last."""
    calls = [
        response(message_assistant("", [ToolCall("add", {"a": i, "b": 1}, id=f"c{i}")]))
        for i in range(steps - 1)
    ]
    return [*calls, response(message_assistant("done"))]


SCRIPTS = {1: replies(1), 10: replies(10)}


def model_for(steps: int) -> Callable[[Request], Response]:
    script = SCRIPTS[steps]

    def model(request: Request) -> Response:
        return script[request.step - 1]

    return model


ADD = Tool("add", "Add two numbers.", {"type": "object"}, lambda a: {"sum": a["a"] + a["b"]})


def start_run_before(
    options: AgentOptions,
    session: Session,
    input: str | Message,
    run_id: str | None = None,
    clock: Callable[[], int] = time.time_ns,
) -> AgentRun:
    """``start_run`` as it was before tracing: the same checks, no provider check."""
    if not isinstance(options, AgentOptions):
        raise TypeError("options must be AgentOptions (see new_agent_options)")
    if not isinstance(session, Session):
        raise TypeError("session must be a Session")
    if isinstance(input, str):
        user = Message(role="user", content=input)
    elif isinstance(input, Message):
        user = input
    else:
        raise TypeError(f"input must be str or Message, got {type(input).__name__}")
    rid = new_run_id() if run_id is None else run_id
    return AgentRun(machine(options, session, user, rid, clock), rid)


CURRENT_START_RUN = drivers.start_run


def variant(options: AgentOptions, before: bool = False) -> Callable[[], Any]:
    start = session("s")
    chosen = start_run_before if before else CURRENT_START_RUN

    def run() -> Any:
        drivers.start_run = chosen  # type: ignore[assignment]
        return run_agent(options, start, "go")

    return run


def per_run_seconds(
    variants: dict[str, Callable[[], Any]], runs: int, repeats: int
) -> dict[str, float]:
    """Return each variant's best time per run, measuring the variants in turn each repeat."""
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(repeats):
        for name, run in variants.items():
            run()  # the first call sets the patched start_run
            gc.collect()
            start = time.perf_counter()
            for _ in range(runs):
                run()
            best[name] = min(best[name], (time.perf_counter() - start) / runs)
    return best


def show(title: str, best: dict[str, float], base: str) -> None:
    print(title)
    for name, seconds in best.items():
        ratio = seconds / best[base]
        print(f"  {name:<28}{seconds * 1e6:9.2f} us/run   {ratio:6.3f}x {base}  ({ratio - 1:+.1%})")


def main(argv: list[str] | None = None) -> None:
    """Measure every variant and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller, faster run")
    args = parser.parse_args(argv)
    runs, repeats = (300, 3) if args.quick else (2000, 15)
    print(f"Python {platform.python_version()} on {platform.machine()}")

    plain = {n: new_agent_options(model_for(n), tools=[ADD]) for n in SCRIPTS}
    assert "opentelemetry" not in sys.modules
    for steps, options in plain.items():
        best = per_run_seconds(
            {"before": variant(options, before=True), "no provider": variant(options)},
            runs,
            repeats,
        )
        show(
            f"{steps}-step run, OpenTelemetry not loaded ({runs} runs, best of {repeats})",
            best,
            "before",
        )
    assert "opentelemetry" not in sys.modules, "a run without a provider loaded OpenTelemetry"

    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    for steps, options in plain.items():
        traced = new_agent_options(model_for(steps), tools=[ADD], tracer_provider=tracer_provider)
        both = new_agent_options(
            model_for(steps),
            tools=[ADD],
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
        )

        def clear(run: Callable[[], Any]) -> Callable[[], Any]:
            def go() -> Any:
                exporter.clear()  # the exporter keeps every span: keep memory flat
                return run()

            return go

        best = per_run_seconds(
            {
                "before": variant(options, before=True),
                "no provider, OTel loaded": variant(options),
                "SDK tracer": clear(variant(traced)),
                "SDK tracer + meter": clear(variant(both)),
            },
            runs,
            repeats,
        )
        show(
            f"{steps}-step run, OpenTelemetry loaded ({runs} runs, best of {repeats})",
            best,
            "before",
        )
    drivers.start_run = CURRENT_START_RUN  # type: ignore[assignment]
    tracer_provider.shutdown()
    meter_provider.shutdown()


if __name__ == "__main__":
    main()
