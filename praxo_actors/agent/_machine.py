"""The agent loop, written once as a sans-IO state machine (a generator of effects).

This is its step loop: the model call, the checks of its reply, tool calls parsed from text,
structured output and completion. The tool calls of a reply are the tool-call step's
(``_tool_step``).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import msgspec

from praxo_actors._errors import AgentError, CompactionError, ToolCallError
from praxo_actors.agent._callids import with_call_ids
from praxo_actors.agent._context import ModelContext
from praxo_actors.agent._effects import BeginStep, CallModel, Effect, Step
from praxo_actors.agent._interrupt import Pending, with_pending
from praxo_actors.agent._model_io import (
    _add_usage,
    _bad_response,
    _compact,
    _instructions,
    _json_or_none,
    _may_hold_calls,
    _not_a_response,
    _prose,
    _redact_messages,
    _text,
)
from praxo_actors.agent._options import AgentOptions
from praxo_actors.agent._report import CALLBACK, _Carried, _crashed, _Events, _fail
from praxo_actors.agent._tool_step import _error_json, tool_step
from praxo_actors.codes import AGENT_MAX_STEPS, AGENT_MODEL_CALL_LIMIT, AGENT_STRUCTURED_OUTPUT
from praxo_actors.core import (
    parse_tool_calls,
    strip_tool_calls,
)
from praxo_actors.middleware._structured_output import structured_steps
from praxo_actors.models import (
    Message,
    ModelError,
    Request,
    Response,
    RunResult,
    Session,
    ToolCall,
)

__all__ = ["Machine", "Steps", "machine", "throw_into"]

Machine = Generator[Effect, Any, RunResult]

Steps = Generator[Step, Any, RunResult]
"""The machine itself: a traced one also yields refused calls, for the tracing layer only."""


def throw_into(gen: Machine, exc: BaseException) -> Effect:
    """Throw a callback's exception into the machine; if the run ends with it, raise it unchanged.

    Raises:
        BaseException: ``exc`` itself (a ``StopIteration`` or a ``KeyboardInterrupt`` too), an
            ``AgentError``, or ``StopIteration`` carrying the result when the run completes.
    """
    if isinstance(exc, Exception) and not isinstance(exc, StopIteration):
        return gen.throw(exc)
    carrier = _Carried(exc)
    try:
        return gen.throw(carrier)
    except _Carried as out:
        if out is not carrier:
            raise
    raise exc


def machine(
    options: AgentOptions,
    session: Session,
    user: Message | None,
    run_id: str,
    clock: Callable[[], int],
    resume: tuple[Pending, Any] | None = None,
    traced: bool = False,
) -> Steps:
    """Yield the effects of one run and return its :class:`RunResult` (see ``AgentRun``).

    With ``resume`` (the session's pending run and the checked resume value) the run goes on
    from its interrupted call instead of starting from ``user``. ``traced``: yield a
    :class:`~praxo_actors.agent._effects.RefusedCall` for each refused tool call (for its span).
    """
    session_id = session.id
    # None without a sink: a run then builds no events at all.
    event = None if options.sink is None else _Events(options.sink, run_id, session_id, clock)

    metadata = session.metadata
    # While True, ``messages`` is the session's messages and ``user``, as they came: the first
    # model call's request takes that list itself, and the run makes its own again once the
    # model has answered (a run waiting on its model then holds one list of them, not two).
    fresh = resume is None
    if resume is None:
        assert user is not None
        messages = [*session.messages, user]
        if event is not None:
            yield event("run.started", {"input": _text(user.content)})
    else:
        messages = list(session.messages)
        metadata = with_pending(metadata, None)
        if event is not None:
            event.seq = resume[0].seq
            yield event("run.resumed", {"step": resume[0].step, "kind": resume[0].kind})

    limit = options.call_limit
    model_limit = limit.model_limit if limit is not None and limit.model_limit > 0 else 0
    advertised = options._advertised
    attempts = options._attempts
    pii = options.pii
    redacted: dict[int, tuple[Message, Message]] = {}
    model_calls = tool_calls = tool_retries = 0
    usage: dict[str, int] = {}
    first_step, resume_calls = 1, None
    if resume is not None:
        pending = resume[0]
        first_step, resume_calls = pending.step, pending.calls
        model_calls, tool_calls, tool_retries, usage = (
            pending.model_calls,
            pending.tool_calls,
            pending.tool_retries,
            dict(pending.usage),
        )
    system: Message | None = None
    if options.instructions is not None:
        try:
            system = _instructions(options.instructions, session)
        except Exception as exc:
            yield from _crashed(event, exc, CALLBACK)
            raise

    for step in range(first_step, options.max_steps + 1):
        if resume_calls is None:
            stop = yield BeginStep(step)
            if stop is not None:
                stopped = yield from _fail(event, run_id, str(stop), f"stopped before step {step}")
                # What the run completed, for a driver that keeps it (newer input interrupted).
                stopped.partial = Session(session_id, messages, dict(metadata))  # type: ignore[attr-defined]
                raise stopped

            if options.compaction is not None:
                try:
                    compacted, removed = yield from _compact(options.compaction, messages)
                except CompactionError as exc:
                    raise (yield from _fail(event, run_id, exc.code, exc.message)) from exc
                except Exception as exc:  # the summariser raised: reported, then re-raised
                    yield from _crashed(event, exc, CALLBACK)
                    raise
                if removed:
                    messages = compacted
                    fresh = False
                    if event is not None:
                        yield event(
                            "context.compacted",
                            {"step": step, "removed": removed, "messages": len(messages)},
                        )

            if model_limit and model_calls >= model_limit:
                raise (
                    yield from _fail(
                        event,
                        run_id,
                        AGENT_MODEL_CALL_LIMIT,
                        f"model call limit {model_limit} reached",
                    )
                )
            model_calls += 1
            if pii:
                sent = _redact_messages(
                    [system, *messages] if system is not None else messages, redacted
                )
            elif system is not None:
                sent = [system, *messages]
            else:  # a copy, the model's to change; none needed for a fresh list (see above)
                sent = messages if fresh else list(messages)
            request = Request(
                messages=sent,
                tools=list(advertised),
                run_id=run_id,
                session_id=session_id,
                step=step,
            )
            if event is not None:
                yield event(
                    "model.requested",
                    {
                        "step": step,
                        "messages": len(messages),
                        "tools": [t.name for t in advertised],
                    },
                )
            del sent
            if fresh:
                del messages  # made again from the session and ``user`` once the model answers
            result: Any = None
            attempt = 0
            context = ModelContext(run_id, session_id, step, event)
            # By index, not `for model in attempts`: a run waiting on its model would hold the
            # tuple's iterator, one more object for the collector per run in flight.
            while attempt < len(attempts):
                model = attempts[attempt]
                attempt += 1
                try:
                    result = yield CallModel(model, request, context)
                except Exception as exc:
                    yield from _crashed(event, exc, CALLBACK)
                    raise
                if type(result) is not ModelError:
                    break
            if fresh:
                messages = [*session.messages, user]  # type: ignore[list-item]
                fresh = False
            if type(result) is not Response:
                if isinstance(result, ModelError):
                    raise (
                        yield from _fail(
                            event,
                            run_id,
                            result.code,
                            result.message or f"model failed: {result.code}",
                        )
                    )
                if not isinstance(result, Response):
                    raise (yield from _crashed(event, _not_a_response(result), CALLBACK))
            reply: Message = result.message
            if type(reply) is not Message or not _json_or_none(result.usage):
                raise (yield from _crashed(event, _bad_response(result), CALLBACK))
            if result.usage:
                _add_usage(usage, result.usage)
            calls: list[ToolCall] = reply.tool_calls
            text = _text(reply.content)
            malformed: ToolCallError | None = None
            fmt = options.tool_call_format
            # The prefilter knows the default set only; a named format's markers are its own.
            if not calls and options.parse_text_tool_calls and (fmt or _may_hold_calls(text)):
                try:
                    calls = parse_tool_calls(text, format=fmt)
                except ToolCallError as exc:
                    malformed = exc
                if calls:  # stored as the calls they are, with the prose around them as text
                    text = strip_tool_calls(text, format=fmt)
                    calls = with_call_ids(calls, run_id, step)
                    content = _prose(reply.content, text)
                    reply = msgspec.structs.replace(reply, content=content, tool_calls=calls)
            messages.append(reply)
            if event is not None:
                yield event(
                    "model.responded",
                    {
                        "step": step,
                        "attempts": attempt,
                        "content": text,
                        "tool_calls": len(calls),
                        "usage": result.usage,
                    },
                )
            if malformed is not None:
                # Malformed markup goes back to the model, which can correct it next step.
                messages.append(
                    Message(role="tool", content=_error_json(malformed.code, malformed.message))
                )
                continue

            if not calls:
                structured = None
                so = options.structured_output
                if so is not None:
                    try:
                        text, structured = yield from structured_steps(so, text)
                    except AgentError as exc:
                        raise (yield from _fail(event, run_id, exc.code, exc.message)) from None
                    except Exception as exc:  # the repairer raised
                        yield from _crashed(event, exc, AGENT_STRUCTURED_OUTPUT)
                        raise
                if event is not None:
                    yield event(
                        "run.completed",
                        {
                            "output": text,
                            "steps": step,
                            "model_calls": model_calls,
                            "tool_calls": tool_calls,
                        },
                    )
                return RunResult(
                    run_id=run_id,
                    session=Session(session_id, messages, dict(metadata)),
                    output=text,
                    structured=structured,
                    steps=step,
                    model_calls=model_calls,
                    tool_calls=tool_calls,
                    usage=usage,
                )

            start = 0
        else:
            calls, start = resume_calls, resume[0].index if resume is not None else 0
            resume_calls = None

        done = yield from tool_step(
            options,
            event,
            run_id,
            session_id,
            metadata,
            messages,
            step,
            calls,
            start,
            resume,
            model_calls,
            tool_calls,
            tool_retries,
            usage,
            traced,
        )
        # The run's tool call and retry counts so far, or the interrupted run's result; tested
        # as a tuple, because isinstance of a Struct class goes through its metaclass's
        # __instancecheck__.
        if not isinstance(done, tuple):
            return done
        tool_calls, tool_retries = done
        resume = None  # the resume value was the resumed call's; later steps have none

    raise (
        yield from _fail(
            event, run_id, AGENT_MAX_STEPS, f"no final answer after {options.max_steps} steps"
        )
    )
