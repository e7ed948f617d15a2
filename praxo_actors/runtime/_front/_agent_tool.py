"""``agent_tool(agent)``: a registered agent offered to another agent as a tool.

A call runs one turn of the agent on a child session of the same runtime (named from the
caller's session by a template) and answers with the child's output; the child's failure is
the call's ``ToolError`` with the child's code. The child's run id is derived from the call's
idempotency key, which a durable parent journals with the call: a parent resumed after a crash
makes the call again with the same key, finds that child run (pending, kept, or journaled) and
waits for it, and never starts a second. The handler is ``async``, so it runs on the runtime's
loop and is cancelled with its caller (a cancelled or timed-out parent cancels the child).
The chain of calling sessions travels with each child run (``StartRun.chain``): a call back
into any of them is ``AGENT_CYCLE``, not a wait on itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import weakref
from typing import TYPE_CHECKING, Any

from praxo_actors._errors import PraxoError
from praxo_actors.agent import Tool, ToolError, tool_context
from praxo_actors.codes import (
    AGENT_CYCLE,
    AGENT_DEPTH,
    AGENT_TOOL_CONTEXT,
    RUNTIME_INVALID_INPUT,
    TOOL_CALL_INVALID_ARGUMENTS,
)
from praxo_actors.models import RunResult
from praxo_actors.runtime._kernel._host import current_host
from praxo_actors.runtime._session._calls import call_chain

if TYPE_CHECKING:
    from praxo_actors.agent import ToolContext
    from praxo_actors.runtime._front._runtime import Runtime

__all__ = ["agent_tool", "track"]

# Per runtime, the nesting depth of each child run in flight (read and written on its loop).
_depths: weakref.WeakKeyDictionary[Runtime, dict[str, int]] = weakref.WeakKeyDictionary()

_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "What to ask the agent."}},
    "required": ["input"],
    "additionalProperties": False,
}


def track(runtime: Runtime) -> None:
    """Let agent tools find ``runtime`` from the run that calls them (at its start): its
    kernel takes the front on its loop, where the tools run."""
    kernel = runtime._kernel
    kernel.post(_attach, kernel, weakref.ref(runtime))


def _attach(kernel: Any, front: weakref.ref[Runtime]) -> None:
    kernel.attach_front(front)
    runtime = front()
    if runtime is not None:
        _depths[runtime] = {}


def agent_tool(
    agent: str,
    *,
    name: str | None = None,
    description: str | None = None,
    session: str = "{session_id}/{name}",
    max_depth: int = 3,
) -> Tool:
    """Return a tool whose call runs one turn of the registered ``agent`` on a child session.

    Args:
        agent: The name the agent is registered under in the caller's runtime.
        name: The tool's name (default: ``agent``).
        description: What the model is told of the tool.
        session: The child session's id: ``{session_id}`` is the caller's session,
            ``{name}`` the tool's name, ``{call_id}`` the call's id (one child per call).
        max_depth: How many agent-tool calls may nest; the next is ``ToolError("AGENT_DEPTH")``.
            A call whose child session is the caller's own, or one that waits further up the
            same call chain, is ``ToolError("AGENT_CYCLE")`` at once (it would wait on itself).

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a bad argument or template.
    """
    tool_name = agent if name is None else name
    if not isinstance(agent, str) or not agent or not isinstance(tool_name, str) or not tool_name:
        raise PraxoError(RUNTIME_INVALID_INPUT, "agent and name must be non-empty strs")
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
        raise PraxoError(RUNTIME_INVALID_INPUT, "max_depth must be an int >= 1")
    try:
        session.format(session_id="s", name=tool_name, call_id="c")
    except (AttributeError, KeyError, IndexError, ValueError) as exc:
        raise PraxoError(
            RUNTIME_INVALID_INPUT, f"session template {session!r} is not usable: {exc!r}"
        ) from None

    async def call(arguments: dict[str, Any]) -> str | ToolError:
        context = tool_context()
        runtime = None if context is None else _owner()
        if context is None or runtime is None:
            return ToolError(AGENT_TOOL_CONTEXT, "an agent tool runs only under a Runtime")
        text = arguments.get("input")
        if not isinstance(text, str):
            return ToolError(TOOL_CALL_INVALID_ARGUMENTS, "input: expected a string")
        depths = _depths[runtime]
        depth = depths.get(context.run_id, 0) + 1
        if depth > max_depth:
            return ToolError(AGENT_DEPTH, f"agent tools nest at most {max_depth} deep")
        child = session.format(
            session_id=context.session_id,
            name=tool_name,
            call_id=context.call_id or context.idempotency_key,
        )
        # Every session of the call chain waits for this call: a child run queued on one of
        # them would wait behind the run that waits for it.
        chain = (*call_chain(), context.session_id)
        if child in chain:
            path = " -> ".join((*chain, child))
            return ToolError(AGENT_CYCLE, f"session {child!r} waits for this call: {path}")
        return await _run_child(runtime, context, agent, child, text, depth, chain)

    about = description or f"Ask the {agent!r} agent; it answers with its reply."
    # The child's answer is text for the calling model, not a JSON string.
    return Tool(tool_name, about, dict(_PARAMETERS), call, text_results=True)


async def _run_child(
    runtime: Runtime,
    context: ToolContext,
    agent: str,
    child: str,
    text: str,
    depth: int,
    chain: tuple[str, ...],
) -> str | ToolError:
    """Run (or, on a repeated call, find) the child run and answer with its output."""
    run_id = child_run_id(context.idempotency_key)
    kernel = runtime._kernel  # on its loop: this tool runs there, as an async callback
    depths = _depths[runtime]
    depths[run_id] = depth
    try:
        handle = runtime.session(child, agent)
        result = await _found(handle, run_id) if context.attempt > 1 else None
        if result is None:
            future = handle._submit(
                run_id, text, None, None, parent=context.session_id, chain=chain
            )
            try:
                result = await future
            except asyncio.CancelledError:  # the caller was cancelled, or its deadline passed
                if not future.done():
                    kernel.post(kernel.cancel, run_id, True)
                raise
    except PraxoError as exc:
        return ToolError(exc.code, exc.message)
    finally:
        depths.pop(run_id, None)
    return result.output


async def _found(handle: Any, run_id: str) -> RunResult | None:
    """The child run a repeated call started before (None if it never started)."""
    try:
        result: RunResult = await handle.aresult(run_id, timeout=None)
    except PraxoError as exc:
        if exc.code == "RUNTIME_UNKNOWN_RUN":
            return None
        raise
    return result


def child_run_id(idempotency_key: str) -> str:
    """The run id of the child run of one agent-tool call (the same on every attempt)."""
    digest = hashlib.blake2b(idempotency_key.encode(), digest_size=12).hexdigest()
    return f"run_child_{digest}"


def _owner() -> Runtime | None:
    """The runtime whose session started the running call (on that runtime's loop)."""
    host = current_host()
    if host is None:
        return None
    runtime: Runtime | None = host.kernel.front()
    return runtime
