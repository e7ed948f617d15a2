"""The two small drivers of the agent state machine, and direct tool calls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from praxo_actors._errors import AgentError
from praxo_actors.agent._effects import Effect, Emit
from praxo_actors.agent._interpret import (
    Call,
    Reply,
    call_async,
    call_now,
    decide,
    publish_async,
    publish_now,
)
from praxo_actors.agent._machine import throw_into
from praxo_actors.agent._options import AgentOptions
from praxo_actors.agent._report import _Carried
from praxo_actors.agent._run import AgentRun, resume_run, start_run
from praxo_actors.agent._tool_step import copy_json
from praxo_actors.codes import TOOL_NOT_FOUND
from praxo_actors.models import Message, RunResult, Session, ToolCall

if TYPE_CHECKING:
    from praxo_actors.agent._journaled import Journal

__all__ = ["aresume_agent", "arun_agent", "call", "resume_agent", "run_agent"]


def run_agent(
    options: AgentOptions,
    session: Session,
    input: str | Message,
    *,
    run_id: str | None = None,
    journal: Journal | None = None,
) -> RunResult:
    """Run the agent loop synchronously until it completes.

    Args:
        options: From :func:`new_agent_options`.
        session: The conversation so far; never mutated.
        input: The user's text (or a user :class:`Message`).
        run_id: The run's id; None draws a fresh one.
        journal: Make the run durable: each completed effect is appended to it before the
            next step, and effects it already holds are answered from it, not performed. Run
            the same ``run_id``, session, input and journal again after a crash to resume.

    Returns:
        The result, whose ``session`` is a new Session holding the whole exchange.

    Raises:
        AgentError: The run failed with a code (``.code``, ``.run_id``).
        Exception: A callback's (or the sink's) own exception, unchanged. An ``async def``
            callback raises ``TypeError`` here: use :func:`arun_agent`.
    """
    run = start_run(options, session, input, run_id)
    if journal is not None:
        from praxo_actors.agent._journaled import run_journaled

        return run_journaled(run, journal, session.id, options.sink)
    return _drive(run)


def _drive(run: AgentRun) -> RunResult:
    # The generator is driven directly (not through AgentRun.send) because this loop is the
    # hot path: one iteration per effect, three effects per tool step.
    gen, effect = run._gen, cast(Effect, run.effect)  # a new run always has one
    thrown: BaseException | None = None
    try:
        while True:
            step = decide(effect)  # an effect no driver knows raises here, not in the run
            try:
                if type(step) is Call:
                    reply = call_now(step)
                elif type(step) is Emit:
                    reply = publish_now(step)
                else:
                    reply = cast(Reply, step).value
            except Exception as exc:
                thrown = exc
                effect = throw_into(gen, exc)
            else:
                effect = gen.send(reply)
    except StopIteration as stop:
        if stop is thrown:  # a callback's own StopIteration, re-raised unchanged
            raise
        result: RunResult = stop.value
        return result
    except _Carried as carried:  # a StopIteration the sink was told of first
        thrown = carried.exc
    raise thrown


async def arun_agent(
    options: AgentOptions,
    session: Session,
    input: str | Message,
    *,
    run_id: str | None = None,
    journal: Journal | None = None,
) -> RunResult:
    """Run the agent loop under asyncio; callbacks (and the sink) may be sync or ``async def``.

    Sync callbacks run on the event loop's thread, so a slow one stalls the loop: make
    blocking callbacks ``async`` (or use the runtime, which runs sync callbacks on a pool).
    Cancelling the task propagates ``CancelledError`` at the callback being awaited and
    emits no ``run.failed``.

    Returns and raises as :func:`run_agent` (``journal`` too).
    """
    run = start_run(options, session, input, run_id)
    if journal is not None:
        from praxo_actors.agent._journaled import arun_journaled

        return await arun_journaled(run, journal, session.id, options.sink)
    return await _adrive(run)


async def _adrive(run: AgentRun) -> RunResult:
    gen, effect = run._gen, cast(Effect, run.effect)  # a new run always has one
    thrown: BaseException | None = None
    try:
        while True:
            step = decide(effect)  # an effect no driver knows raises here, not in the run
            try:
                if type(step) is Call:
                    reply = await call_async(step)
                elif type(step) is Emit:
                    reply = await publish_async(step)
                else:
                    reply = cast(Reply, step).value
            except Exception as exc:
                thrown = exc
                effect = throw_into(gen, exc)
            else:
                effect = gen.send(reply)
    except StopIteration as stop:
        if stop is thrown:  # Python turns it into RuntimeError as it leaves this coroutine
            raise
        result: RunResult = stop.value
        return result


def resume_agent(
    options: AgentOptions,
    session: Session,
    value: Any,
    *,
    journal: Journal | None = None,
) -> RunResult:
    """Go on with the interrupted run ``session`` holds, synchronously (see :func:`run_agent`).

    ``value`` is the interrupted tool call's result, or for an approval ``True``, ``False`` or
    ``{"approved": True, "arguments": {...}}``. The run keeps its ``run_id``.

    Raises:
        AgentError: ``SESSION_NOT_INTERRUPTED``, ``AGENT_INVALID_RESUME``, and as
            :func:`run_agent`.
    """
    run = resume_run(options, session, value)
    if journal is not None:
        from praxo_actors.agent._journaled import run_journaled

        return run_journaled(run, journal, session.id, options.sink)
    return _drive(run)


async def aresume_agent(
    options: AgentOptions,
    session: Session,
    value: Any,
    *,
    journal: Journal | None = None,
) -> RunResult:
    """:func:`resume_agent` under asyncio (callbacks may be ``async def``)."""
    run = resume_run(options, session, value)
    if journal is not None:
        from praxo_actors.agent._journaled import arun_journaled

        return await arun_journaled(run, journal, session.id, options.sink)
    return await _adrive(run)


def call(options: AgentOptions, tool_call: ToolCall) -> Any:
    """Invoke a registered tool directly, outside tool selection and call limits.

    The handler gets a copy of the arguments. Its return value comes back unchanged — a
    :class:`ToolError` included, and a coroutine for an ``async def`` handler.

    Raises:
        AgentError: ``TOOL_NOT_FOUND`` when no tool has that name.
    """
    tool = options._tools_by_name.get(tool_call.name)
    if tool is None:
        raise AgentError(TOOL_NOT_FOUND, f"no tool named {tool_call.name!r}")
    return tool.handler(copy_json(tool_call.arguments))
