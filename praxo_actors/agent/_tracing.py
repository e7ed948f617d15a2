"""OpenTelemetry spans and metrics of a run, after the GenAI semantic conventions.

:func:`traced` wraps the run's state machine in a second generator that passes every effect
through to the driver and every reply back to the machine. A span starts when the machine
yields a ``CallModel`` (``chat {model}``) or a ``CallTool`` (``execute_tool {tool}``) and ends
when the driver resumes the run with that effect's reply or exception, so the span covers the
callback's whole time under every driver (``run_agent``, ``arun_agent``, the runtime's session
actor), with no context variables: each child names the run's span ``invoke_agent {agent}`` as
its parent explicitly. A tool call refused before any handler ran (its arguments, its
selection, the tool budget, an unknown tool, a denied approval) is a
:class:`~praxo_actors.agent._effects.RefusedCall` the traced machine yields to this wrapper
alone: its ``execute_tool`` span starts and ends at once, failed with the refusal's code.

This module is imported only when a provider is configured (on the options, on the runtime, or
globally), so a program without tracing never loads OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from opentelemetry import metrics, trace

from praxo_actors.agent._effects import CallModel, CallTool, Effect, RefusedCall
from praxo_actors.agent._machine import Machine, Steps
from praxo_actors.agent._options import AgentOptions
from praxo_actors.agent._scrub import failure_message
from praxo_actors.agent._spans import Call, Run, error_type, refused
from praxo_actors.agent._telemetry import Telemetry
from praxo_actors.models import Message, RunResult

__all__ = [
    "Telemetry",
    "global_meter_provider",
    "global_tracer_provider",
    "telemetry_for",
    "traced",
]

# (id(tracer provider), id(meter provider)) -> (the providers, their telemetry). The providers
# are kept so that a recycled id() is noticed; a host has a handful of them.
_cache: dict[tuple[int, int], tuple[Any, Any, Telemetry]] = {}


def telemetry_for(options: AgentOptions) -> Telemetry | None:
    """Return the telemetry of ``options``' providers (None ones: the global providers).

    Return None when no provider is set anywhere: the run is then not wrapped at all.
    """
    tracer_provider = options.tracer_provider
    if tracer_provider is None:
        tracer_provider = global_tracer_provider()
    meter_provider = options.meter_provider
    if meter_provider is None:
        meter_provider = global_meter_provider()
    if tracer_provider is None and meter_provider is None:
        return None
    key = (id(tracer_provider), id(meter_provider))
    hit = _cache.get(key)
    if hit is None or hit[0] is not tracer_provider or hit[1] is not meter_provider:
        if len(_cache) >= 64:
            _cache.clear()
        hit = (tracer_provider, meter_provider, Telemetry(tracer_provider, meter_provider))
        _cache[key] = hit
    return hit[2]


def global_tracer_provider() -> Any:
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None  # nothing set: its spans would record nothing
    return provider


def global_meter_provider() -> Any:
    provider = metrics.get_meter_provider()
    if isinstance(provider, metrics.NoOpMeterProvider):
        return None
    if type(provider).__name__ == "_ProxyMeterProvider":  # the API's placeholder, until set
        return None
    return provider


def traced(
    inner: Steps,
    telemetry: Telemetry,
    options: AgentOptions,
    session_id: str,
    run_id: str,
    user: Message,
) -> Machine:
    """Return ``inner`` wrapped so that it reports its spans and metrics (see module doc)."""
    return _steps(inner, Run(telemetry, options, session_id, run_id, user))


def _steps(inner: Steps, run: Run) -> Generator[Effect, Any, RunResult]:
    call: Call | None = None
    try:
        effect = inner.send(None)
        while True:
            if isinstance(effect, RefusedCall):  # for its span only: no driver sees it
                refused(run, effect)
                effect = inner.send(None)
                continue
            if isinstance(effect, CallModel | CallTool):
                call = Call(run, effect)
            try:
                reply = yield effect
            except GeneratorExit:  # the driver abandoned the run (a crash, a forced stop)
                if call is not None:
                    call.abandoned()
                    call = None
                inner.close()
                raise
            except BaseException as exc:
                if call is not None:
                    call.failed(exc)
                    call = None
                effect = inner.throw(exc)
            else:
                if call is not None:
                    call.done(reply)
                    call = None
                effect = inner.send(reply)
    except StopIteration as stop:
        result: RunResult = stop.value
        run.completed(result)
        return result
    except GeneratorExit:
        run.ended("_OTHER", "run abandoned")
        raise
    except BaseException as exc:
        run.ended(error_type(exc), failure_message(exc), exc)
        raise
