"""A service for tests/protocols/test_a2a_mcp_serving.py, run as a child process: the A2A app
and the MCP server's HTTP app mounted together and served with ``serve`` until SIGTERM; then
the runtime is stopped and ``stopped`` printed."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.routing import Mount

from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.protocols import a2a_app, mcp_server
from praxo_actors.runtime import Runtime
from praxo_actors.serving import serve


def echo(request: Request) -> Response:
    return Response(message_assistant(f"echo: {request.messages[-1].content}"))


def main(port: int) -> None:
    """Serve on 127.0.0.1:``port`` until a signal; stop the runtime after."""
    runtime = Runtime.start(idle_timeout=None)
    runtime.register_agent("default", lambda: new_agent_options(echo))
    tools = mcp_server(runtime)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with tools.session_manager.run():
            yield

    app = Starlette(
        routes=[Mount("/tools", tools.streamable_http_app()), Mount("/", a2a_app(runtime))],
        lifespan=lifespan,
    )
    try:
        serve(app, port=port, runtime=runtime)
    finally:
        runtime.stop()
    print("stopped", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
