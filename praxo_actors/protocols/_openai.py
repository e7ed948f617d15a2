"""``openai_app``: the runtime's agents as OpenAI chat completions (built on call)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from praxo_actors.protocols._extra import check_runtime, require

if TYPE_CHECKING:
    from praxo_actors.cluster import ClusterRuntime
    from praxo_actors.runtime import Runtime

__all__ = ["openai_app"]


def openai_app(
    runtime: Runtime | ClusterRuntime, *, allowed_hosts: Iterable[str] | None = None
) -> Any:
    """Return an ASGI app serving ``runtime``'s agents as an OpenAI-compatible API.

    ``GET /v1/models`` lists the registered agents; ``POST /v1/chat/completions`` runs the
    agent its ``model`` names, blocking or streamed (``stream``, with ``stream_options:
    {"include_usage": true}`` a last chunk with the usage). The session is the
    ``X-Praxo-Session`` header or the ``user`` field: its stored history is the
    conversation and the request's last message (the user's) is the input. Without either,
    each request is a new session, and the request's earlier messages are given to the model
    before it (the response's ``X-Praxo-Session`` header names the session). The answer is the
    run's output: the text of steps that call tools is not part of it. A failed run is an
    OpenAI-shaped error body, ``{"error": {"message", "type", "param", "code"}}``, whose
    ``code`` is the run's (in a stream: an ``error`` chunk); the client does not retry it. See
    docs/how-to/protocols.md.

    Refusals: 421 ``PROTOCOL_HOST_REFUSED`` for a foreign ``Host``; 400 ``PROTOCOL_BAD_JSON``,
    413 ``PROTOCOL_TOO_LARGE``, 400 ``PROTOCOL_INVALID_INPUT`` (with the ``param``); 404
    ``RUNTIME_UNKNOWN_AGENT``; 409 ``SESSION_BUSY``, ``SESSION_INTERRUPTED`` and
    ``PROTOCOL_RUN_INTERRUPTED`` (the run waits for a person); 429 ``SESSION_OVERLOADED``; over
    a ``ClusterRuntime``, 400 ``PROTOCOL_NOT_ON_CLUSTER`` for earlier messages without a
    session (the hosts cannot see them: name a session).

    Args:
        runtime: The runtime whose agents to serve.
        allowed_hosts: ``host`` or ``host:port`` entries accepted in ``Host`` (None: the
            address served on, and the loopback names for a loopback address).

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a ``runtime`` that is neither a
            ``Runtime`` nor a ``ClusterRuntime``.
        ModuleNotFoundError: Starlette is not installed (the ``protocols`` extra).
    """
    require("starlette")
    check_runtime(runtime)
    from praxo_actors.protocols._openai_app import build

    return build(cast("Runtime", runtime), allowed_hosts)
