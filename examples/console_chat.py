"""A console chat in which typing while the agent works interrupts it.

The runtime runs with ``on_busy="interrupt"``: a line typed while a run is going cancels that
run at its next step boundary (its future fails with ``AGENT_CANCELLED``), keeps the steps it
completed in the session, and answers the new line after them. ``on_busy="rollback"`` would
keep nothing of the cancelled run.

The agent looks each question up (a tool that takes ``PRAXO_LOOKUP_SECONDS``, 1.0 by default)
and then answers. Run it and type: ``python examples/console_chat.py``. End with Ctrl-D (exit
status 0), or stop it with Ctrl-C (exit status 130).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from praxo_actors import AgentError
from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime, SessionHandle

LOOKUP_SECONDS = float(os.environ.get("PRAXO_LOOKUP_SECONDS", "1.0"))


async def model(request: Request) -> Response:
    """Look the question up first; answer once the lookup has returned."""
    last = request.messages[-1]
    if last.role == "user":
        return Response(message_assistant("", [ToolCall("lookup", {"q": last.content})]))
    question = next(m.content for m in reversed(request.messages) if m.role == "user")
    return Response(message_assistant(f"answer to {question}"))


async def lookup(arguments: dict[str, Any]) -> str:
    print(f"... looking up: {arguments['q']}", flush=True)
    await asyncio.sleep(LOOKUP_SECONDS)  # slow work: a search, a long model call
    return f"notes on {arguments['q']}"


def agent() -> AgentOptions:
    return new_agent_options(model, tools=[Tool("lookup", "Look a question up", {}, lookup)])


async def answer(session: SessionHandle, line: str) -> None:
    try:
        result = await session.arun(line)
    except AgentError as exc:
        if exc.code != "AGENT_CANCELLED":
            raise
        print(f"(interrupted: {line})", flush=True)
        return
    print(f"agent: {result.output}", flush=True)


async def main() -> int:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    async with Runtime.open(None, on_busy="interrupt", idle_timeout=None) as runtime:
        runtime.register_agent("default", agent)
        session = runtime.session("console")
        answers: list[asyncio.Task[None]] = []
        try:
            while line := (await reader.readline()).decode():
                if line.strip():
                    answers.append(asyncio.create_task(answer(session, line.strip())))
            await asyncio.gather(*answers)
        finally:
            # On Ctrl-C (this task cancelled) the answers still waiting are cancelled and
            # awaited before the runtime stops, so none fails unseen with RUNTIME_STOPPED.
            for task in answers:
                task.cancel()
            await asyncio.gather(*answers, return_exceptions=True)
        history = await session.ahistory()
        print(f"{sum(m.role == 'user' for m in history)} questions in the history", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except KeyboardInterrupt:  # Ctrl-C: the runtime has stopped; no traceback
        sys.exit(130)
