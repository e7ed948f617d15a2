"""The agent loop: a model, tools and opt-in middleware, run over a session.

The loop is written once, as a sans-IO state machine (:func:`start_run` returns it as an
:class:`AgentRun`). It never calls anything itself: it yields *effects* and is resumed with
their results. :func:`run_agent` (sync) and :func:`arun_agent` (asyncio) are two small drivers
of it; the actor runtime is a third.

The protocol, for a driver::

    run = start_run(options, session, "hello")
    effect = run.effect
    while effect is not None:
        try:
            reply = perform(effect)          # see the list below
        except Exception as exc:
            effect = run.throw(exc)          # never swallow: the run reports and re-raises
        else:
            effect = run.send(reply)
    result = run.result                      # RunResult

- ``BeginStep(step)`` — reply ``None`` to go on, or an error code (``"AGENT_CANCELLED"``,
  ``"AGENT_DEADLINE"``) to fail the run with that code;
- ``CallModel(model, request, context)`` — reply ``model(request)``: a ``Response`` or
  ``ModelError``; make ``context`` current meanwhile (:func:`model_context`);
- ``CallTool(tool, arguments, call, context)`` — reply ``tool.handler(arguments)``; make
  ``context`` current meanwhile (:func:`tool_context`);
- ``Emit(sink, event)`` — call ``sink(event)``, reply ``None``;
- ``CallRepairer(repairer, text, errors)`` — reply ``repairer(text, errors)``;
- ``CallSummarizer(summarizer, messages)`` — reply ``summarizer(messages)``.

A reply that is awaitable is the driver's to await. ``send`` / ``throw`` raise
:class:`AgentError` when the run fails with a code (after ``run.failed``), and
re-raise a callback's exception unchanged (after ``run.failed``) or a sink's (with no further
event).

Each step: ``BeginStep``; compaction if configured (event ``context.compacted``); the model
budget; the model call (one ``CallModel`` per :func:`fallback_model` attempt, counted as one
call); then each tool call in order — selection (``AGENT_TOOL_NOT_SELECTED``), existence
(``TOOL_NOT_FOUND``), tool budget (``AGENT_TOOL_CALL_LIMIT``), all before invocation, each
failing the run. A reply without tool calls completes the run (after structured output).
"""

from __future__ import annotations

from praxo_actors._errors import AgentError
from praxo_actors.agent._context import ModelContext, ToolContext, model_context, tool_context
from praxo_actors.agent._drivers import aresume_agent, arun_agent, call, resume_agent, run_agent
from praxo_actors.agent._effects import (
    BeginStep,
    CallModel,
    CallRepairer,
    CallSummarizer,
    CallTool,
    Effect,
    Emit,
)
from praxo_actors.agent._fallback import FallbackModel, Model, fallback_model
from praxo_actors.agent._function_tool import tool
from praxo_actors.agent._interrupt import Interrupt
from praxo_actors.agent._journaled import Journal, ListJournal, StoreJournal
from praxo_actors.agent._options import AgentOptions, Instructions, Sink, new_agent_options
from praxo_actors.agent._run import AgentRun, start_run
from praxo_actors.agent._runid import new_run_id
from praxo_actors.agent._tool import Tool, ToolError, ToolRetry

__all__ = [
    "AgentError",
    "AgentOptions",
    "AgentRun",
    "BeginStep",
    "CallModel",
    "CallRepairer",
    "CallSummarizer",
    "CallTool",
    "Effect",
    "Emit",
    "FallbackModel",
    "Instructions",
    "Interrupt",
    "Journal",
    "ListJournal",
    "Model",
    "ModelContext",
    "Sink",
    "StoreJournal",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRetry",
    "aresume_agent",
    "arun_agent",
    "call",
    "fallback_model",
    "model_context",
    "new_agent_options",
    "new_run_id",
    "resume_agent",
    "run_agent",
    "start_run",
    "tool",
    "tool_context",
]
