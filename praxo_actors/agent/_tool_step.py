"""The tool-call step of the agent loop: a reply's tool calls, in order, each to a tool message.

Each call is checked before it runs: selection (``AGENT_TOOL_NOT_SELECTED``), existence
(``TOOL_NOT_FOUND``), approval (an interrupt, when the call needs one) and the tool budget
(``AGENT_TOOL_CALL_LIMIT``) fail the run; then its arguments against the tool's schema, whose
failure is the call's result (``TOOL_CALL_INVALID_ARGUMENTS``, for the model to correct). A
handler's :class:`~praxo_actors.agent.ToolRetry` is the result ``TOOL_RETRY``, up to
``max_tool_retries`` per run (``AGENT_TOOL_RETRIES`` beyond). A tool's
:class:`~praxo_actors.agent.Interrupt` stops the run at its call too; a resumed run comes back
here, at that call.
"""

from __future__ import annotations

import copy
from collections.abc import Generator
from typing import Any

import msgspec

from praxo_actors._errors import JSONError
from praxo_actors.agent._context import ToolContext
from praxo_actors.agent._effects import CallTool, RefusedCall, Step
from praxo_actors.agent._interrupt import Interrupt, Pending, with_pending
from praxo_actors.agent._options import AgentOptions
from praxo_actors.agent._report import CALLBACK, _crashed, _Events, _fail
from praxo_actors.agent._tool import TOOL_RETRY, ToolError, ToolRetry
from praxo_actors.codes import AGENT_TOOL_CALL_LIMIT, AGENT_TOOL_NOT_SELECTED, APPROVAL_DENIED
from praxo_actors.core import SchemaError, encode_json, redact_pii, redact_value
from praxo_actors.models import Message, RunResult, Session, ToolCall

__all__ = ["copy_json", "tool_step"]

INVALID_ARGUMENTS = "TOOL_CALL_INVALID_ARGUMENTS"
TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
TOOL_RETRIES = "AGENT_TOOL_RETRIES"
# A model gets this many schema errors of one call at most: enough to fix it, bounded in size.
_SHOWN_ERRORS = 10


def tool_step(
    options: AgentOptions,
    event: _Events | None,
    run_id: str,
    session_id: str,
    metadata: dict[str, Any],
    messages: list[Message],
    step: int,
    calls: list[ToolCall],
    start: int,
    resume: tuple[Pending, Any] | None,
    model_calls: int,
    tool_calls: int,
    tool_retries: int,
    usage: dict[str, int],
    traced: bool = False,
) -> Generator[Step, Any, tuple[int, int] | RunResult]:
    """Yield the effects of ``calls[start:]``, appending each one's tool message to ``messages``.

    Return the run's tool call and tool retry counts after them, or the interrupted run's
    :class:`RunResult` when a call needs approval or its tool interrupts. With ``resume`` (the
    pending run and the checked resume value, on the step a run resumes at) ``calls[start]``
    is the interrupted call, and the resume value its result or its approval. ``metadata``,
    ``model_calls`` and ``usage`` are only for an interrupt to keep. ``traced``: yield a
    :class:`RefusedCall` for each call refused before a handler ran (its span's only source).
    """
    limit = options.call_limit
    tool_limit = limit.tool_limit if limit is not None and limit.tool_limit > 0 else 0
    selection = options.tool_selection
    tools = options._tools_by_name
    approval = options.approval
    pii = options.pii
    validate = options.validate_tool_arguments
    retry_unknown = options.unknown_tool == "retry"
    for index in range(start, len(calls)):
        call = calls[index]
        name = call.name
        arguments = call.arguments
        decided = None
        unknown = False
        if resume is not None:
            pending, resumed = resume
            resume = None
            if pending.kind == "tool":
                # The tool interrupted: the resume value is its result (budget spent then).
                value: Any = resumed
                tool = tools.get(name)
                decided = "result"
            else:
                approved, edited = resumed
                if not approved:
                    denied = f"the call of {name!r} was denied"
                    if traced:
                        yield RefusedCall(call, APPROVAL_DENIED, denied)
                    output = _error_json(APPROVAL_DENIED, denied)
                    messages.append(
                        Message(role="tool", content=output, tool_call_id=call.id, name=name)
                    )
                    if event is not None:
                        yield event(
                            "tool.completed",
                            {
                                "step": step,
                                "name": name,
                                "id": call.id,
                                "output": output,
                                "error": "APPROVAL_DENIED",
                            },
                        )
                    continue
                decided = "approved"
                if edited is not None:
                    arguments = edited
        if decided != "result":
            if selection is not None and not selection.permits(name):
                raise (
                    yield from _refuse(
                        event,
                        traced,
                        run_id,
                        call,
                        AGENT_TOOL_NOT_SELECTED,
                        f"tool {name!r} is not selected",
                    )
                )
            tool = tools.get(name)
            if tool is None and not retry_unknown:
                raise (
                    yield from _refuse(
                        event, traced, run_id, call, TOOL_NOT_FOUND, f"no tool named {name!r}"
                    )
                )
            if tool is None:
                unknown = True
                # The model is told which tools exist, to call one of them next step.
                value = ToolError(TOOL_NOT_FOUND, _unknown_text(name, options))
                if traced:
                    yield RefusedCall(call, value.code, value.message)
                if event is not None:
                    yield event(
                        "tool.started",
                        {"step": step, "name": name, "id": call.id, "arguments": arguments},
                    )
            else:
                if decided is None and approval is not None and approval.requires(name, tool):
                    payload = {
                        "approval": {"tool": name, "arguments": arguments, "call_id": call.id}
                    }
                    where = Pending(run_id, "approval", step, index, list(calls), payload)
                    return (
                        yield from _interrupted(
                            event,
                            session_id,
                            messages,
                            metadata,
                            where,
                            (model_calls, tool_calls, tool_retries),
                            usage,
                        )
                    )
                if tool_limit and tool_calls >= tool_limit:
                    raise (
                        yield from _refuse(
                            event,
                            traced,
                            run_id,
                            call,
                            AGENT_TOOL_CALL_LIMIT,
                            f"tool call limit {tool_limit} reached",
                        )
                    )
                tool_calls += 1
                if event is not None:
                    yield event(
                        "tool.started",
                        {"step": step, "name": name, "id": call.id, "arguments": arguments},
                    )
                check = tool._validator if validate else None
                problems = None if check is None else check(arguments)
                if problems:
                    value = ToolError(INVALID_ARGUMENTS, _problems_text(problems))
                    if traced:
                        yield RefusedCall(call, value.code, value.message)
                else:
                    try:
                        value = yield CallTool(
                            tool,
                            copy_json(arguments),
                            call,
                            ToolContext(run_id, session_id, call.id, f"{run_id}:{step}:{index}"),
                        )
                    except ToolRetry as exc:
                        value = ToolError(TOOL_RETRY, exc.message)
                    except Exception as exc:
                        yield from _crashed(event, exc, CALLBACK)
                        raise
                if type(value) is Interrupt:
                    where = Pending(run_id, "tool", step, index, list(calls), value.payload)
                    return (
                        yield from _interrupted(
                            event,
                            session_id,
                            messages,
                            metadata,
                            where,
                            (model_calls, tool_calls, tool_retries),
                            usage,
                        )
                    )
        error: str | None = None
        if isinstance(value, ToolError):
            error = value.code
            if error == TOOL_RETRY or unknown:
                tool_retries += 1
                if tool_retries > options.max_tool_retries:
                    raise (
                        yield from _fail(
                            event,
                            run_id,
                            TOOL_RETRIES,
                            _retries_text(name, unknown, options.max_tool_retries, value),
                        )
                    )
            output = _error_json(value.code, value.message)
            content = _error_json(value.code, redact_pii(value.message)) if pii else output
        elif type(value) is str and tool is not None and tool.text_results:
            output = value
            content = redact_pii(value) if pii else value
        else:
            try:
                output = encode_json(value)
                content = encode_json(redact_value(value)) if pii else output
            except JSONError as exc:
                bad = TypeError(f"tool {name!r} returned a value that is not JSON: {exc}")
                raise (yield from _crashed(event, bad, CALLBACK)) from exc
        messages.append(Message(role="tool", content=content, tool_call_id=call.id, name=name))
        if event is not None:
            yield event(
                "tool.completed",
                {"step": step, "name": name, "id": call.id, "output": output, "error": error},
            )
    return tool_calls, tool_retries


def _refuse(
    event: _Events | None, traced: bool, run_id: str, call: ToolCall, code: str, message: str
) -> Generator[Step, Any, Exception]:
    """Refuse ``call`` with ``code``, failing the run (the refusal first, for its span)."""
    if traced:
        yield RefusedCall(call, code, message)
    return (yield from _fail(event, run_id, code, message))


def _interrupted(
    event: _Events | None,
    session_id: str,
    messages: list[Message],
    metadata: dict[str, Any],
    where: Pending,
    counts: tuple[int, int, int],
    usage: dict[str, int],
) -> Generator[Step, Any, RunResult]:
    """Stop the run to ask a person: the session keeps the run so far and where to go on.

    ``counts``: the run's model calls, tool calls and tool retries so far.
    """
    model_calls, tool_calls, tool_retries = counts
    pending = msgspec.structs.replace(
        where,
        model_calls=model_calls,
        tool_calls=tool_calls,
        tool_retries=tool_retries,
        usage=dict(usage),
    )
    if event is not None:
        yield event(
            "run.interrupted",
            {"step": pending.step, "kind": pending.kind, "payload": pending.payload},
        )
        pending = msgspec.structs.replace(pending, seq=event.seq)
    return RunResult(
        run_id=pending.run_id,
        session=Session(session_id, messages, with_pending(metadata, pending)),
        output="",
        steps=pending.step,
        model_calls=pending.model_calls,
        tool_calls=pending.tool_calls,
        usage=dict(pending.usage),
        status="interrupted",
        interrupt=pending.payload,
    )


def _unknown_text(name: str, options: AgentOptions) -> str:
    """Say that ``name`` is no tool, and name the tools the model may call."""
    names = ", ".join(spec.name for spec in options._advertised)
    return f"no tool named {name!r}; the tools are: {names}" if names else "there are no tools"


def _retries_text(name: str, unknown: bool, limit: int, value: ToolError) -> str:
    if unknown:
        return f"a call of the unknown tool {name!r} after {limit} retries in this run"
    return f"tool {name!r} asked for a retry after {limit} retries in this run: {value.message}"


def _error_json(code: str, message: str) -> str:
    return encode_json({"error": {"code": code, "message": message}})


def _problems_text(problems: list[SchemaError]) -> str:
    """Say where and why arguments fail their schema: ``<path>: <message>``, ``; ``-joined."""
    shown = "; ".join(f"{e.path or '/'}: {e.message}" for e in problems[:_SHOWN_ERRORS])
    more = len(problems) - _SHOWN_ERRORS
    return f"{shown}; and {more} more" if more > 0 else shown


_SCALARS = frozenset({str, int, float, bool, type(None)})


def copy_json(value: Any) -> Any:
    """Return a deep copy of a JSON-like value (fast for dicts, lists and scalars)."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _SCALARS else copy_json(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _SCALARS else copy_json(v) for v in value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)
