"""``ag_ui_app``: an agent served over AG-UI (the app is built, and its SDKs imported, on call)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from praxo_actors.protocols._extra import check_runtime, require

if TYPE_CHECKING:
    from praxo_actors.cluster import ClusterRuntime
    from praxo_actors.runtime import Runtime

__all__ = ["ag_ui_app"]


def ag_ui_app(
    runtime: Runtime | ClusterRuntime,
    *,
    agent: str = "default",
    path: str = "/",
    allowed_hosts: Iterable[str] | None = None,
) -> Any:
    """Return an ASGI app that runs ``agent`` for AG-UI clients.

    ``POST path`` takes a ``RunAgentInput`` and answers with the run's AG-UI events as
    server-sent events, carrying the client's ``threadId`` and ``runId``. The thread is the
    session, which keeps the conversation: only the request's trailing user messages are run
    (the earlier ones are the client's copy of what the session holds). The client's
    ``tools`` are offered to the model beside the agent's own; a call to one ends the run
    (``RUN_FINISHED``, the call in ``pendingToolCallIds``) and the next request's trailing
    ``tool`` message is its result, with which the run goes on. An approval ends the run with
    an ``interrupt`` outcome, answered by the next request's ``resume`` entry. A failed run
    ends with ``RUN_ERROR`` carrying its code. See docs/how-to/protocols.md.

    A request for another ``Host`` than the app is served on is 421
    ``PROTOCOL_HOST_REFUSED``; a body that is not JSON 400 ``PROTOCOL_BAD_JSON``; over 4 MiB
    413 ``PROTOCOL_TOO_LARGE``; not a ``RunAgentInput`` (or nothing to run) 422
    ``PROTOCOL_INVALID_INPUT``; an unknown agent 404 ``RUNTIME_UNKNOWN_AGENT``; more than 64
    distinct sets of tools 429 ``PROTOCOL_TOO_MANY_TOOL_SETS``. A client that closes the
    stream cancels its run (over a ``ClusterRuntime`` the run goes on).

    Args:
        runtime: The runtime whose agent to serve.
        agent: The registered agent's name.
        path: The route to answer.
        allowed_hosts: ``host`` or ``host:port`` entries accepted in ``Host`` (None: the
            address served on, and the loopback names for a loopback address).

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a ``runtime`` that is neither a
            ``Runtime`` nor a ``ClusterRuntime``.
        ModuleNotFoundError: ``ag-ui-protocol`` or Starlette is not installed (the
            ``protocols`` extra).
    """
    require("ag_ui", "starlette")
    check_runtime(runtime)
    from praxo_actors.protocols._ag_ui_app import build

    return build(cast("Runtime", runtime), agent, path, allowed_hosts)
