"""A service for tests/observer/test_serving.py, run as a child process: ``serve`` an app with
two kinds of event stream (the observer's, mounted, and a handler's own
``runtime.events.stream``) until SIGTERM; then stop the runtime and print ``stopped``."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Mount, Route

from praxo_actors.observer import observer_app
from praxo_actors.runtime import Runtime
from praxo_actors.serving import serve


def main(port: int, plain: bool = False) -> None:
    """Serve on 127.0.0.1:``port`` until a signal; stop the runtime after.

    ``plain`` serves with ``uvicorn.run`` instead (for bench/serving.py's comparison).
    """
    runtime = Runtime.start(idle_timeout=None)

    async def events(_request: Request) -> StreamingResponse:
        stream = runtime.events.stream("*")  # subscribed now, before the response starts

        async def body() -> AsyncIterator[bytes]:
            yield b": open\n\n"
            async with stream:
                async for event in stream:
                    yield f"data: {event.type}\n\n".encode()
            yield b": end\n\n"

        return StreamingResponse(body(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/events", events), Mount("/observer", observer_app(runtime))])
    try:
        if plain:
            import uvicorn

            uvicorn.run(
                app,
                host="127.0.0.1",
                port=port,
                log_level="warning",
                timeout_graceful_shutdown=5,
            )
        else:
            serve(app, port=port, runtime=runtime)
    finally:
        runtime.stop()
    print("stopped", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2:] == ["plain"])
