"""A service for tests/protocols/test_a2a_restart.py, run as a child process: the A2A app over
a durable agent on the SQLite file given, served with ``serve`` until SIGTERM (or a SIGKILL);
then the runtime is stopped and ``stopped`` printed."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from praxo_actors.agent import new_agent_options
from praxo_actors.models import ModelError, Request, Response, message_assistant
from praxo_actors.protocols import a2a_app
from praxo_actors.runtime import Runtime
from praxo_actors.serving import serve


async def echo(request: Request) -> Response | ModelError:
    """Fail when told; wait for the gate file (bounded) when told; else say what the user
    said."""
    text = request.messages[-1].content
    if text == "fail":
        return ModelError("MODEL_UNAVAILABLE", "the model is down")
    if text == "wait":
        gate = Path(os.environ["PRAXO_TEST_GATE"])
        for _ in range(600):  # at most 30 s
            if gate.exists():
                break
            await asyncio.sleep(0.05)
    return Response(message_assistant(f"echo: {text}"))


def main(port: int, store: str) -> None:
    """Serve on 127.0.0.1:``port`` until a signal; stop the runtime after."""
    runtime = Runtime.start(store, idle_timeout=None)
    runtime.register_agent("default", lambda: new_agent_options(echo), durable=True)
    try:
        serve(a2a_app(runtime), port=port, runtime=runtime)
    finally:
        runtime.stop()
    print("stopped", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
