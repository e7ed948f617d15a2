"""A service for tests/protocols/test_protocol_serving.py, run as a child process: the AG-UI and the
OpenAI apps mounted together and served with ``serve`` until SIGTERM; then the runtime is
stopped and ``stopped`` printed."""

from __future__ import annotations

import sys

from starlette.applications import Starlette
from starlette.routing import Mount

from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request, Response, message_assistant
from praxo_actors.protocols import ag_ui_app, openai_app
from praxo_actors.runtime import Runtime
from praxo_actors.serving import serve


def echo(request: Request) -> Response:
    return Response(message_assistant(f"echo: {request.messages[-1].content}"))


def main(port: int) -> None:
    """Serve on 127.0.0.1:``port`` until a signal; stop the runtime after."""
    runtime = Runtime.start(idle_timeout=None)
    runtime.register_agent("default", lambda: new_agent_options(echo))
    app = Starlette(routes=[Mount("/ag-ui", ag_ui_app(runtime)), Mount("/", openai_app(runtime))])
    try:
        serve(app, port=port, runtime=runtime)
    finally:
        runtime.stop()
    print("stopped", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
