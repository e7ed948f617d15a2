"""The spans and measurements of one run (``invoke_agent``) and of each of its calls.

:class:`Run` opens the run's span and records its duration; :class:`Call` does the same for
one model call (``chat``) or tool call (``execute_tool``), a child of the run's span. Every
string they write goes through :mod:`praxo_actors.agent._scrub` (error text redacted, values
cut); content only with ``capture_content``, through :mod:`praxo_actors.agent._content`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from praxo_actors._errors import PraxoError
from praxo_actors.agent._caller import take
from praxo_actors.agent._content import input_value, messages_json, output_value, value_json
from praxo_actors.agent._effects import CallModel, CallTool, RefusedCall
from praxo_actors.agent._genai import (
    MEASURED,
    PROVIDER,
    finish_reason,
    model_attributes,
    model_name,
    provider_of,
    response_attributes,
)
from praxo_actors.agent._options import AgentOptions
from praxo_actors.agent._report import _Carried
from praxo_actors.agent._scrub import (
    cut,
    cut_attributes,
    error_text,
    exception_attributes,
    failure_message,
)
from praxo_actors.agent._tool import ToolError
from praxo_actors.models import Message, ModelError, Response, RunResult, ToolCall

if TYPE_CHECKING:
    from praxo_actors.agent._telemetry import Telemetry

__all__ = ["Call", "Run", "error_type", "refused"]


def error_type(exc: BaseException) -> str:
    """Return what ``error.type`` says of a failure: its code, or the exception's type name."""
    if isinstance(exc, _Carried):
        exc = exc.exc
    if isinstance(exc, PraxoError):
        return exc.code
    return type(exc).__name__


class Run:
    """One run's telemetry: its span (if tracing), its settings and its start time.

    ``measured`` holds the attributes of its metric point; ``finish_reason`` is its last
    answer's, for its output message.
    """

    __slots__ = (
        "content",
        "finish_reason",
        "limit",
        "measured",
        "parent",
        "provider",
        "session_id",
        "span",
        "started",
        "telemetry",
    )

    def __init__(
        self,
        telemetry: Telemetry,
        options: AgentOptions,
        session_id: str,
        run_id: str,
        user: Message,
    ) -> None:
        self.telemetry = telemetry
        self.content = options.capture_content
        self.limit = options.max_attribute_bytes
        self.provider = options.provider_name
        self.session_id = session_id
        self.finish_reason = "stop"
        agent = options.name
        measured: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent"}
        provider = provider_of(options)
        if provider is not None:
            measured[PROVIDER] = provider
        if agent:
            measured["gen_ai.agent.name"] = agent
        self.measured = cut_attributes(measured, self.limit)
        self.span: Span | None = None
        self.parent: Any = None
        tracer = telemetry.tracer
        if tracer is not None:
            attributes = {
                **self.measured,
                "gen_ai.conversation.id": session_id,
                "praxo.run.id": run_id,
            }
            name = f"invoke_agent {agent}" if agent else "invoke_agent"
            self.span = tracer.start_span(
                cut(name, self.limit),
                context=take(run_id),  # a hosted run's caller's; None: the current context
                kind=SpanKind.INTERNAL,
                attributes=cut_attributes(attributes, self.limit),
            )
            if self.content:
                self.set(self.span, "gen_ai.input.messages", messages_json([user]))
                value, mime_type = input_value(user)  # OpenInference's, for trace viewers
                self.set(self.span, "input.value", value)
                self.span.set_attribute("input.mime_type", mime_type)
            self.parent = trace.set_span_in_context(self.span)
        self.started = time.perf_counter()

    def set(self, span: Span, key: str, text: str) -> None:
        """Set a string attribute, cut to the run's size."""
        span.set_attribute(key, cut(text, self.limit))

    def fail(self, span: Span, error: str, message: str, exc: BaseException | None) -> None:
        """Mark ``span`` failed with ``error`` (a code) and ``message``, both made safe here."""
        span.set_attribute("error.type", error_text(error, self.limit))
        span.set_status(Status(StatusCode.ERROR, error_text(message, self.limit)))
        if exc is not None:
            span.add_event("exception", exception_attributes(exc, self.content, self.limit))

    def completed(self, result: RunResult) -> None:
        """End the run with its result."""
        self._measure(None)
        span = self.span
        if span is None:
            return
        _set_usage(span, result.usage)
        span.set_attribute("praxo.run.steps", result.steps)
        if self.content:
            output = [Message(role="assistant", content=result.output)]
            self.set(span, "gen_ai.output.messages", messages_json(output, self.finish_reason))
            value, mime_type = output_value(result)
            self.set(span, "output.value", value)
            span.set_attribute("output.mime_type", mime_type)
        span.end()

    def ended(self, error: str, message: str, exc: BaseException | None = None) -> None:
        """End the run failed (or abandoned) with ``error``."""
        self._measure(error)
        span = self.span
        if span is not None:
            self.fail(span, error, message, exc)
            span.end()

    def _measure(self, error: str | None) -> None:
        duration = self.telemetry.duration
        if duration is None:
            return
        attributes = self.measured
        if error is not None:
            attributes = {**attributes, "error.type": error_text(error, self.limit)}
        duration.record(time.perf_counter() - self.started, attributes)


def _set_usage(span: Span, usage: dict[str, Any] | None) -> None:
    if not usage:
        return
    for key in ("input_tokens", "output_tokens"):
        value = usage.get(key)
        if type(value) is int:
            span.set_attribute(f"gen_ai.usage.{key}", value)


def _tool_span(run: Run, tool: str, call: ToolCall) -> tuple[str, dict[str, Any]]:
    """The name and attributes of an ``execute_tool`` span (of ``run``'s conversation)."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.type": "function",
        "gen_ai.conversation.id": run.session_id,
    }
    if call.id is not None:
        attributes["gen_ai.tool.call.id"] = call.id
    return f"execute_tool {tool}", cut_attributes(attributes, run.limit)


def refused(run: Run, refusal: RefusedCall) -> None:
    """Record a tool call refused before any handler ran: a span failed with its code."""
    tracer = run.telemetry.tracer
    if tracer is None:
        return
    call = refusal.call
    name, attributes = _tool_span(run, call.name, call)
    span = tracer.start_span(
        cut(name, run.limit), context=run.parent, kind=SpanKind.INTERNAL, attributes=attributes
    )
    if run.content:
        run.set(span, "gen_ai.tool.call.arguments", value_json(call.arguments))
    run.fail(span, refusal.code, refusal.message, None)
    span.end()


class Call:
    """One model or tool call in flight: its span (if tracing) and its start time.

    ``measured`` holds the attributes of its metric points (a model call's only).
    """

    __slots__ = ("effect", "measured", "run", "span", "started")

    def __init__(self, run: Run, effect: CallModel | CallTool) -> None:
        self.run = run
        self.effect = effect
        limit = run.limit
        if type(effect) is CallModel:
            model = model_name(effect.model)
            name = f"chat {model}"
            kind = SpanKind.CLIENT
            attributes: dict[str, Any] = {
                **model_attributes(effect.model),  # first: a model cannot rename the operation
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": model,
            }
            if PROVIDER not in attributes and run.provider is not None:
                attributes[PROVIDER] = run.provider
            attributes = cut_attributes(attributes, limit)
            self.measured = {k: v for k, v in attributes.items() if k in MEASURED}
            attributes["gen_ai.conversation.id"] = cut(run.session_id, limit)
        else:
            assert type(effect) is CallTool
            name, attributes = _tool_span(run, effect.tool.name, effect.call)
            kind = SpanKind.INTERNAL
            self.measured = {}
        self.span: Span | None = None
        tracer = run.telemetry.tracer
        if tracer is not None:
            span = tracer.start_span(
                cut(name, limit), context=run.parent, kind=kind, attributes=attributes
            )
            if run.content:
                if isinstance(effect, CallModel):
                    messages = messages_json(effect.request.messages)
                    run.set(span, "gen_ai.input.messages", messages)
                else:
                    run.set(span, "gen_ai.tool.call.arguments", value_json(effect.arguments))
            self.span = span
        self.started = time.perf_counter()

    def done(self, reply: Any) -> None:
        """End the call with the callback's return value."""
        if type(reply) is ModelError or type(reply) is ToolError:
            self._end(reply.code, reply.message)
            return
        if type(self.effect) is CallModel:
            if type(reply) is Response:
                self._answered(reply)
        elif self.span is not None and self.run.content:
            self.run.set(self.span, "gen_ai.tool.call.result", value_json(reply))
        self._end(None, "", reply)

    def _answered(self, reply: Response) -> None:
        """Record what the model's answer says of itself (and, with content, the answer)."""
        run = self.run
        run.finish_reason = finish_reason(reply)
        answered = cut_attributes(response_attributes(reply), run.limit)
        response_model = answered.get("gen_ai.response.model")
        if response_model is not None:
            self.measured = {**self.measured, "gen_ai.response.model": response_model}
        span = self.span
        if span is None:
            return
        span.set_attributes(answered)
        _set_usage(span, reply.usage)
        if run.content:
            output = messages_json([reply.message], run.finish_reason)
            run.set(span, "gen_ai.output.messages", output)

    def failed(self, exc: BaseException) -> None:
        """End the call with the exception it raised (or the interrupt thrown into the run)."""
        self._end(error_type(exc), failure_message(exc), exc=exc)

    def abandoned(self) -> None:
        """End the call of a run its driver gave up on."""
        self._end("_OTHER", "run abandoned")

    def _end(
        self, error: str | None, message: str, reply: Any = None, exc: BaseException | None = None
    ) -> None:
        telemetry = self.run.telemetry
        if telemetry.duration is not None and type(self.effect) is CallModel:
            elapsed = time.perf_counter() - self.started
            attributes = self.measured
            if error is not None:
                attributes = {**attributes, "error.type": error_text(error, self.run.limit)}
            telemetry.duration.record(elapsed, attributes)
            if telemetry.tokens is not None and type(reply) is Response and reply.usage:
                for key, kind in (("input_tokens", "input"), ("output_tokens", "output")):
                    value = reply.usage.get(key)
                    if type(value) is int:
                        telemetry.tokens.record(value, {**attributes, "gen_ai.token.type": kind})
        span = self.span
        if span is not None:
            if error is not None:
                self.run.fail(span, error, message, exc)
            span.end()
