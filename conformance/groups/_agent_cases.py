"""Run one agent-loop vector: build the scripted model and tools, run, compare observations.

A case (shared by the ``agent_loop`` and ``middleware`` groups) holds:

- ``input`` (str) and optional ``session`` (``{"id", "messages", "metadata"}``);
- ``model``: a list of replies returned in order — ``{"content", "tool_calls"?}`` (a Response),
  ``{"error": {"code", "message"?}}`` (a ModelError), ``{"raise": true}`` (the callback raises),
  ``{"malformed": true}`` (returns something that is neither) — or ``{"fallback": [m1, m2]}``
  with each ``m`` itself a model;
- ``tools``: ``{"name", "parameters"?: schema, "echo": true | "returns": value | "tool_error":
  {...} | "raises": true | "mutates": true | "unencodable": true | "interrupts": payload |
  "retry": message}`` (``retry``: the handler raises ``ToolRetry(message)``);
- ``options``: ``max_steps``, ``parse_text_tool_calls``, ``pii``, ``validate_tool_arguments``,
  ``max_tool_retries``, ``instructions`` (a str), ``tool_selection`` (names), ``call_limit``
  (``[model, tool]``), ``structured_output`` (``{"schema", "max_repairs", "repairs"?: [replies],
  "repairer_raises"?}``), ``compaction`` (``{"max_tokens", "keep_last"?, "summaries"?:
  [replies]}``), ``approval`` (tool names);
- ``resume``: values to resume an interrupted run with, in order (``resume_agent`` on the last
  result's session each time).

Outcome: ``expect`` (a subset of ``output``, ``structured``, ``steps``, ``model_calls``,
``tool_calls``, ``messages``, ``metadata``, ``tool_error_codes``, ``status``, ``interrupt``,
``interrupts`` (the payload of every interruption, in order)), or ``error`` (a code), or
``raises``: ``"callback"`` (the callback's own exception) / ``"type_error"``. Observations,
each optional: ``events`` (types, or ``[type, data subset]``), ``invocations`` (tool name and
arguments as received), ``requests`` (per model call: a subset of ``step``, ``tools``,
``messages``, ``run_id``), ``repairer_calls`` (``{"text", "keywords"}``), ``summarizer_calls``
(the messages given). Every run uses run id ``run-1``; event ``seq`` must count from 0 and the
input session must be left unchanged.
"""

from __future__ import annotations

from typing import Any

import msgspec

from conformance._runner import CaseFailure, expect_outcome
from praxo_actors.agent import (
    Interrupt,
    Tool,
    ToolError,
    ToolRetry,
    fallback_model,
    new_agent_options,
    resume_agent,
    run_agent,
)
from praxo_actors.middleware import (
    apply_structured,
    call_limit,
    compaction,
    require_approval,
    structured_output,
    tool_selection,
)
from praxo_actors.models import (
    Event,
    Message,
    ModelError,
    Request,
    Response,
    RunResult,
    Session,
)

RUN_ID = "run-1"


class VectorCallbackError(Exception):
    """Raised by a scripted callback whose vector says it raises."""


class Log:
    """Everything the scripted callbacks observed."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.invocations: list[dict[str, Any]] = []
        self.requests: list[Request] = []
        self.repairer_calls: list[dict[str, Any]] = []
        self.summarizer_calls: list[list[Any]] = []


def message_json(message: Message) -> dict[str, Any]:
    """Return a message as vector JSON, leaving out fields at their defaults."""
    out: dict[str, Any] = {"role": message.role, "content": msgspec.to_builtins(message.content)}
    if message.tool_calls:
        out["tool_calls"] = [_call_json(c) for c in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def _call_json(call: Any) -> dict[str, Any]:
    out = {"name": call.name, "arguments": call.arguments}
    if call.id is not None:
        out["id"] = call.id
    return out


def _message(spec: dict[str, Any]) -> Message:
    return msgspec.convert(spec, Message)


def _reply(spec: dict[str, Any]) -> Any:
    if "error" in spec:
        return ModelError(spec["error"]["code"], spec["error"].get("message", ""))
    if spec.get("raise"):
        raise VectorCallbackError("scripted model raised")
    if spec.get("malformed"):
        return {"not": "a response"}
    return Response(_message({"role": "assistant", **spec}))


def _model(spec: Any, log: Log) -> Any:
    if isinstance(spec, dict):
        primary, fallback = spec["fallback"]
        return fallback_model(_model(primary, log), _model(fallback, log))
    replies = list(spec)

    def model(request: Request) -> Any:
        log.requests.append(request)
        if not replies:
            raise CaseFailure(f"model called more often than scripted (step {request.step})")
        return _reply(replies.pop(0))

    return model


def _tool(spec: dict[str, Any], log: Log) -> Tool:
    name = spec["name"]

    def handler(arguments: dict[str, Any]) -> Any:
        log.invocations.append({"name": name, "arguments": msgspec.to_builtins(arguments)})
        if spec.get("echo"):
            return arguments
        if "returns" in spec:
            return spec["returns"]
        if "tool_error" in spec:
            return ToolError(spec["tool_error"]["code"], spec["tool_error"].get("message", ""))
        if spec.get("raises"):
            raise VectorCallbackError(f"tool {name} raised")
        if spec.get("mutates"):
            arguments.clear()
            arguments["mutated"] = True
            return "ok"
        if spec.get("unencodable"):
            return {1, 2}
        if "interrupts" in spec:
            return Interrupt(spec["interrupts"])
        if "retry" in spec:
            raise ToolRetry(spec["retry"])
        return None

    return Tool(name, spec.get("description", ""), spec.get("parameters", {}), handler)


def _scripted(replies: list[Any] | None, raises: bool, record: Any) -> Any:
    if replies is None and not raises:
        return None
    pending = list(replies or [])

    def callback(*args: Any) -> Any:
        record(*args)
        if raises:
            raise VectorCallbackError("scripted callback raised")
        if not pending:
            raise CaseFailure("callback called more often than scripted")
        return pending.pop(0)

    return callback


def _structured(spec: dict[str, Any], log: Log) -> Any:
    repairer = _scripted(
        spec.get("repairs"),
        bool(spec.get("repairer_raises")),
        lambda text, errors: log.repairer_calls.append(
            {"text": text, "keywords": [e.keyword for e in errors]}
        ),
    )
    return structured_output(spec["schema"], spec.get("max_repairs", 0), repairer)


def _fields(case: dict[str, Any], log: Log) -> dict[str, Any]:
    opts = dict(case.get("options", {}))
    fields: dict[str, Any] = {}
    for name in (
        "max_steps",
        "parse_text_tool_calls",
        "pii",
        "validate_tool_arguments",
        "max_tool_retries",
        "instructions",
    ):
        if name in opts:
            fields[name] = opts[name]
    if opts.get("tool_selection") is not None:
        fields["tool_selection"] = tool_selection(opts["tool_selection"])
    if "call_limit" in opts:
        fields["call_limit"] = call_limit(*opts["call_limit"])
    if "approval" in opts:
        fields["approval"] = require_approval(opts["approval"])
    if "structured_output" in opts:
        fields["structured_output"] = _structured(opts["structured_output"], log)
    if "compaction" in opts:
        spec = opts["compaction"]
        summarizer = _scripted(
            spec.get("summaries"),
            bool(spec.get("summarizer_raises")),
            lambda middle: log.summarizer_calls.append([message_json(m) for m in middle]),
        )
        fields["compaction"] = compaction(spec["max_tokens"], spec.get("keep_last", 6), summarizer)
    return fields


def _observed(result: RunResult, interrupts: list[Any] | None = None) -> dict[str, Any]:
    messages = result.session.messages
    codes = []
    for message in messages:
        if message.role == "tool" and isinstance(message.content, str):
            try:
                value = msgspec.json.decode(message.content)
            except msgspec.DecodeError:
                continue
            if isinstance(value, dict) and isinstance(value.get("error"), dict):
                codes.append(value["error"].get("code"))
    return {
        "output": result.output,
        "structured": result.structured,
        "steps": result.steps,
        "model_calls": result.model_calls,
        "tool_calls": result.tool_calls,
        "messages": [message_json(m) for m in messages],
        "metadata": result.session.metadata,
        "tool_error_codes": codes,
        "status": result.status,
        "interrupt": result.interrupt,
        "interrupts": interrupts or [],
    }


def _subset(label: str, want: dict[str, Any], got: dict[str, Any]) -> None:
    for key, value in want.items():
        if key not in got or got[key] != value:
            raise CaseFailure(f"{label}: {key} expected {value!r}, got {got.get(key)!r}")


def _check_events(case: dict[str, Any], events: list[Event]) -> None:
    if [e.seq for e in events] != list(range(len(events))):
        raise CaseFailure(f"event seqs are {[e.seq for e in events]}")
    if any(e.run_id != RUN_ID for e in events):
        raise CaseFailure("an event carries another run id")
    if "events" not in case:
        return
    want = case["events"]
    got = [e.type for e in events]
    if [w if isinstance(w, str) else w[0] for w in want] != got:
        raise CaseFailure(f"events expected {want!r}, got {got!r}")
    for w, event in zip(want, events, strict=True):
        if not isinstance(w, str):
            _subset(f"event {event.type}", w[1], event.data)


def _check_observations(case: dict[str, Any], log: Log) -> None:
    _check_events(case, log.events)
    if "invocations" in case and log.invocations != case["invocations"]:
        raise CaseFailure(f"invocations expected {case['invocations']!r}, got {log.invocations!r}")
    if "requests" in case:
        if len(case["requests"]) != len(log.requests):
            raise CaseFailure(
                f"expected {len(case['requests'])} model requests, got {len(log.requests)}"
            )
        for i, (want, request) in enumerate(zip(case["requests"], log.requests, strict=True)):
            got = {
                "step": request.step,
                "run_id": request.run_id,
                "tools": [t.name for t in request.tools],
                "messages": [message_json(m) for m in request.messages],
            }
            _subset(f"request {i}", want, got)
    for key in ("repairer_calls", "summarizer_calls"):
        if key in case and getattr(log, key) != case[key]:
            raise CaseFailure(f"{key} expected {case[key]!r}, got {getattr(log, key)!r}")


def run_agent_case(case: dict[str, Any]) -> None:
    """Run one loop vector and raise :class:`CaseFailure` on any difference."""
    log = Log()
    model = _model(case["model"], log)
    tools = [_tool(spec, log) for spec in case.get("tools", [])]
    options = new_agent_options(model, tools=tools, sink=log.events.append, **_fields(case, log))
    spec = case.get("session", {})
    session = Session(
        id=spec.get("id", "s1"),
        messages=[_message(m) for m in spec.get("messages", [])],
        metadata=spec.get("metadata", {}),
    )
    before = msgspec.json.encode(session)

    interrupts: list[Any] = []

    def thunk() -> RunResult:
        result = run_agent(options, session, case["input"], run_id=RUN_ID)
        for value in case.get("resume", []):
            interrupts.append(result.interrupt)
            result = resume_agent(options, result.session, value)
        if result.status == "interrupted":
            interrupts.append(result.interrupt)
        return result

    if "raises" in case:
        kind = {"callback": VectorCallbackError, "type_error": TypeError}[case["raises"]]
        try:
            thunk()
        except kind:
            pass
        else:
            raise CaseFailure(f"expected the run to raise {kind.__name__}")
    else:
        wanted = case.get("expect", {})
        expect_outcome(case, thunk, lambda r: {k: _observed(r, interrupts)[k] for k in wanted})
    if msgspec.json.encode(session) != before:
        raise CaseFailure("the input session changed")
    _check_observations(case, log)


def run_apply_structured_case(case: dict[str, Any]) -> None:
    """Run one ``apply_structured`` vector; ``expect`` is ``[text, value]``."""
    log = Log()
    so = _structured(case["structured_output"], log)
    if case.get("raises") == "callback":
        try:
            apply_structured(so, case["text"])
        except VectorCallbackError:
            pass
        else:
            raise CaseFailure("expected the repairer's exception")
    else:
        expect_outcome(case, lambda: apply_structured(so, case["text"]), list)
    if "repairer_calls" in case and log.repairer_calls != case["repairer_calls"]:
        raise CaseFailure(
            f"repairer_calls expected {case['repairer_calls']!r}, got {log.repairer_calls!r}"
        )
