"""The protocols clients speak: each an ASGI app (or server) over a runtime (extra ``protocols``).

Each serves a :class:`~praxo_actors.runtime.Runtime` or a
:class:`~praxo_actors.cluster.ClusterRuntime` (what a cluster cannot do is refused with
``PROTOCOL_NOT_ON_CLUSTER``).

``ag_ui_app(runtime)`` serves an agent to AG-UI front ends, ``openai_app(runtime)`` the
registered agents as OpenAI-compatible chat completions, ``a2a_app(runtime)`` an agent to A2A
clients and ``mcp_server(runtime)`` the registered agents as MCP tools. Each app is a Starlette
app: mount them together (``Mount``) in a host service, or serve one with
:func:`praxo_actors.serving.serve`. Each answers only the ``Host`` it is served on (421
``PROTOCOL_HOST_REFUSED``) and answers hostile input with a 4xx and a code. Their SDKs are
imported when an app is built, never by ``import praxo_actors.protocols``. See
docs/how-to/protocols.md, docs/how-to/protocols-a2a.md and docs/how-to/protocols-mcp-server.md.
"""

from __future__ import annotations

from praxo_actors.protocols._a2a import a2a_app
from praxo_actors.protocols._ag_ui import ag_ui_app
from praxo_actors.protocols._mcp_server import mcp_server
from praxo_actors.protocols._openai import openai_app

__all__ = [
    "a2a_app",
    "ag_ui_app",
    "mcp_server",
    "openai_app",
]
