"""OpenTelemetry spans and metrics of a run, after the GenAI semantic conventions.

:func:`traced` wraps the run's state machine in a second generator that passes every effect
through to the driver and every reply back to the machine. A span starts when the machine
yields a ``CallModel`` (``chat {model}``) or a ``CallTool`` (``execute_tool {tool}``) and ends
when the driver resumes the run with that effect's reply or exception, so the span covers the
callback's whole time under every driver (``run_agent``, ``arun_agent``, the runtime's session
actor), with no context variables: each child names the run's span ``invoke_agent {agent}`` as
its parent explicitly.

This module is imported only when a provider is configured (on the options, on the runtime, or
globally), so a program without tracing never loads OpenTelemetry.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from praxo_actors import __version__
from praxo_actors._errors import PraxoError
from praxo_actors.agent._content import messages_json, value_json
from praxo_actors.agent._effects import CallModel, CallTool, Effect
from praxo_actors.agent._machine import Machine
from praxo_actors.agent._options import AgentOptions
from praxo_actors.agent._report import _Carried
from praxo_actors.agent._tool import ToolError
from praxo_actors.core import redact_pii
from praxo_actors.models import Message, ModelError, Response, RunResult

__all__ = [
    "Telemetry",
    "error_type",
    "global_meter_provider",
    "global_tracer_provider",
    "model_name",
    "telemetry_for",
    "traced",
]

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


def model_name(model: Any) -> str:
    """Return the name a model goes by: a provider's model id, else the callable's name.

    Wrappers (``rate_limited``, ``retrying``) keep the model they wrap as ``.model``.
    """
    for _ in range(8):
        inner = getattr(model, "model", None)
        if isinstance(inner, str) and inner:
            return inner
        if inner is None or not callable(inner):
            break
        model = inner
    name = getattr(model, "__name__", None)
    return name if isinstance(name, str) else type(model).__name__


def error_type(exc: BaseException) -> str:
    """Return what ``error.type`` says of a failure: its code, or the exception's type name."""
    if isinstance(exc, _Carried):
        exc = exc.exc
    if isinstance(exc, PraxoError):
        return exc.code
    return type(exc).__name__


def traced(
    inner: Machine,
    telemetry: Telemetry,
    options: AgentOptions,
    session_id: str,
    run_id: str,
    user: Message,
) -> Machine:
    """Return ``inner`` wrapped so that it reports its spans and metrics (see module doc)."""
    tracer = telemetry.tracer
    content = options.capture_content
    agent = options.name
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": session_id,
        "praxo.run.id": run_id,
    }
    if agent:
        attributes["gen_ai.agent.name"] = agent
    run_span = None
    parent = None
    if tracer is not None:
        name = f"invoke_agent {agent}" if agent else "invoke_agent"
        run_span = tracer.start_span(name, kind=SpanKind.INTERNAL, attributes=attributes)
        if content:
            run_span.set_attribute("gen_ai.input.messages", messages_json([user]))
        parent = trace.set_span_in_context(run_span)
    started = time.perf_counter()
    return _steps(inner, telemetry, content, run_span, parent, agent, started)


def _steps(
    inner: Machine,
    telemetry: Telemetry,
    content: bool,
    run_span: Span | None,
    parent: Any,
    agent: str | None,
    started: float,
) -> Generator[Effect, Any, RunResult]:
    tracer = telemetry.tracer
    call: _Call | None = None
    try:
        effect = inner.send(None)
        while True:
            if isinstance(effect, CallModel | CallTool):
                call = _Call(telemetry, tracer, parent, effect, content)
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
        _end_run(telemetry, run_span, agent, started, None, result, content)
        return result
    except GeneratorExit:
        _end_run(telemetry, run_span, agent, started, "_OTHER", None, content, "run abandoned")
        raise
    except BaseException as exc:
        message = exc.message if isinstance(exc, PraxoError) else type(exc).__name__
        _end_run(telemetry, run_span, agent, started, error_type(exc), None, content, message)
        raise


def _end_run(
    telemetry: Telemetry,
    span: Span | None,
    agent: str | None,
    started: float,
    error: str | None,
    result: RunResult | None,
    content: bool,
    message: str = "",
) -> None:
    if telemetry.duration is not None:
        attributes: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent"}
        if agent:
            attributes["gen_ai.agent.name"] = agent
        if error is not None:
            attributes["error.type"] = error
        telemetry.duration.record(time.perf_counter() - started, attributes)
    if span is None:
        return
    if error is not None:
        span.set_attribute("error.type", error)
        span.set_status(Status(StatusCode.ERROR, message))
    elif result is not None:
        _set_usage(span, result.usage)
        span.set_attribute("praxo.run.steps", result.steps)
        if content:
            output = [Message(role="assistant", content=result.output)]
            span.set_attribute("gen_ai.output.messages", messages_json(output))
    span.end()


def _set_usage(span: Span, usage: dict[str, Any] | None) -> None:
    if not usage:
        return
    for key in ("input_tokens", "output_tokens"):
        value = usage.get(key)
        if type(value) is int:
            span.set_attribute(f"gen_ai.usage.{key}", value)


class _Call:
    """One model or tool call in flight: its span (if tracing) and its start time."""

    __slots__ = ("attributes", "content", "effect", "span", "started", "telemetry")

    def __init__(
        self,
        telemetry: Telemetry,
        tracer: trace.Tracer | None,
        parent: Any,
        effect: CallModel | CallTool,
        content: bool,
    ) -> None:
        self.telemetry = telemetry
        self.effect = effect
        self.content = content
        if type(effect) is CallModel:
            model = model_name(effect.model)
            name = f"chat {model}"
            kind = SpanKind.CLIENT
            self.attributes: dict[str, Any] = {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": model,
            }
        else:
            assert type(effect) is CallTool
            tool = effect.tool
            name = f"execute_tool {tool.name}"
            kind = SpanKind.INTERNAL
            self.attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool.name,
                "gen_ai.tool.type": "function",
            }
            if effect.call.id is not None:
                self.attributes["gen_ai.tool.call.id"] = effect.call.id
        self.span: Span | None = None
        if tracer is not None:
            span = tracer.start_span(name, context=parent, kind=kind, attributes=self.attributes)
            if content:
                if isinstance(effect, CallModel):
                    span.set_attribute(
                        "gen_ai.input.messages", messages_json(effect.request.messages)
                    )
                else:
                    span.set_attribute("gen_ai.tool.call.arguments", value_json(effect.arguments))
            self.span = span
        self.started = time.perf_counter()

    def done(self, reply: Any) -> None:
        """End the call with the callback's return value."""
        span = self.span
        if type(reply) is ModelError:
            self._end(reply.code, redact_pii(reply.message))
            return
        if type(reply) is ToolError:
            self._end(reply.code, redact_pii(reply.message))
            return
        if span is not None:
            if type(reply) is Response:
                _set_usage(span, reply.usage)
                if self.content:
                    span.set_attribute("gen_ai.output.messages", messages_json([reply.message]))
            elif self.content and type(self.effect) is CallTool:
                span.set_attribute("gen_ai.tool.call.result", value_json(reply))
        self._end(None, "", reply)

    def failed(self, exc: BaseException) -> None:
        """End the call with the exception it raised (or the interrupt thrown into the run)."""
        self._end(error_type(exc), exc.message if isinstance(exc, PraxoError) else "")

    def abandoned(self) -> None:
        """End the call of a run its driver gave up on."""
        self._end("_OTHER", "run abandoned")

    def _end(self, error: str | None, message: str, reply: Any = None) -> None:
        telemetry = self.telemetry
        if telemetry.duration is not None and type(self.effect) is CallModel:
            elapsed = time.perf_counter() - self.started
            attributes = self.attributes
            if error is not None:
                attributes = {**attributes, "error.type": error}
            telemetry.duration.record(elapsed, attributes)
            if telemetry.tokens is not None and type(reply) is Response and reply.usage:
                for key, kind in (("input_tokens", "input"), ("output_tokens", "output")):
                    value = reply.usage.get(key)
                    if type(value) is int:
                        telemetry.tokens.record(value, {**attributes, "gen_ai.token.type": kind})
        span = self.span
        if span is not None:
            if error is not None:
                span.set_attribute("error.type", error)
                span.set_status(Status(StatusCode.ERROR, message))
            span.end()
