"""The protocols clients speak: each an ASGI app (or server) over a runtime (extra ``protocols``).

``ag_ui_app(runtime)`` serves an agent to AG-UI front ends and ``openai_app(runtime)`` the
registered agents as OpenAI-compatible chat completions. Each is a Starlette app: mount them
together (``Mount``) in a host service, or serve one with :func:`praxo_actors.serving.serve`.
Each answers only the ``Host`` it is served on (421 ``PROTOCOL_HOST_REFUSED``) and answers
hostile input with a 4xx and a code. Their SDKs are imported when an app is built, never by
``import praxo_actors.protocols``. See docs/protocols.md.
"""

from __future__ import annotations

from praxo_actors.protocols._ag_ui import ag_ui_app
from praxo_actors.protocols._openai import openai_app

__all__ = [
    "ag_ui_app",
    "openai_app",
]
