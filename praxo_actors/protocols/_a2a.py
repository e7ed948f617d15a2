"""``a2a_app``: an agent served over A2A (the app is built, and its SDK imported, on call)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from praxo_actors.protocols._runtimes import check

if TYPE_CHECKING:
    from praxo_actors.cluster import ClusterRuntime
    from praxo_actors.runtime import Runtime

__all__ = ["a2a_app", "require_runtime", "require_sdk"]


def require_sdk(*modules: str) -> None:
    """Raise ``ModuleNotFoundError`` naming the extra if one of ``modules`` is missing."""
    for name in modules:
        if importlib.util.find_spec(name) is None:
            raise ModuleNotFoundError(
                f"praxo_actors.protocols needs {name}: pip install 'praxo-actors[protocols]'",
                name=name,
            )


def require_runtime(runtime: Any) -> None:
    """Refuse anything but a ``Runtime`` or a ``ClusterRuntime`` (``RUNTIME_INVALID_INPUT``)."""
    check(runtime)


def a2a_app(
    runtime: Runtime | ClusterRuntime,
    *,
    agent: str = "default",
    card: Any = None,
    url: str | None = None,
    allowed_hosts: Iterable[str] | None = None,
) -> Any:
    """Return an ASGI app that serves ``agent`` to A2A clients (JSON-RPC, ``a2a-sdk``).

    A message's context is the session (``runtime.session(context_id, agent)``): the session
    keeps the conversation, so each message is one run of its text. ``SendMessage`` answers with
    the task when its run ends (or at once, asked to return immediately);
    ``SendStreamingMessage`` streams the task's status updates. A task is one run: its id is the
    run's id (and so is its metadata's ``praxo.run_id``); a durable agent's run is in the store
    (on a cluster, the shared one) before its task is answered. A task the app no longer
    remembers (past its last 10,000, or answered before the process restarted) is found again
    from the runtime by ``GetTask``, ``CancelTask``, ``SubscribeToTask`` and the message
    answering it, as long as the runtime keeps the run's outcome: ``completed``, ``failed``
    with its code, ``input-required``, or ``working`` (followed from then on). Cancelling the
    task cancels the run (over a ``ClusterRuntime``, a run in flight cannot be: ``CancelTask``
    answers ``TaskNotCancelable`` with ``PROTOCOL_NOT_ON_CLUSTER``). An approval or a tool's
    ``Interrupt`` leaves the task ``input-required`` (the status message carries the interrupt's
    payload as a data part); the next message of the task answers it (its data part, or its text
    read as JSON when it is JSON, else the text) and the run goes on; an answer the run refuses
    (``AGENT_INVALID_RESUME``) leaves the task ``input-required``. A failed run is a ``failed``
    task whose status message says the code (and carries it in its metadata's ``praxo.code``);
    the output of a completed run is the artifact ``output``. The agent card (at
    ``/.well-known/agent-card.json``) lists the agent's tools as skills (an agent without tools:
    one skill, the conversation), unless ``card`` is given.

    The app answers the protocol's JSON-RPC itself, as the a2a-sdk's clients expect it (protocol
    1.0; ``SubscribeToTask`` too; listing tasks and push notifications are not served). A
    request for another ``Host`` than the app is served on is 421 ``PROTOCOL_HOST_REFUSED``;
    malformed JSON-RPC is a JSON-RPC error with the SDK's code and a 4xx (400
    ``PROTOCOL_BAD_JSON`` or ``PROTOCOL_INVALID_INPUT``, 413 ``PROTOCOL_TOO_LARGE``: the code
    in the error's ``data[0].metadata["praxo.code"]``), never a 500.

    Args:
        runtime: The runtime whose agent to serve.
        agent: The registered agent's name.
        card: An ``a2a.types.AgentCard`` to serve instead of the one built from the agent.
        url: The URL the card tells clients to use (None: the URL the card is fetched
            from, where the app is served).
        allowed_hosts: ``host`` or ``host:port`` entries accepted in ``Host`` (None: the
            address served on, and the loopback names for a loopback address).

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` for a ``runtime`` that is neither a
            ``Runtime`` nor a ``ClusterRuntime``;
            ``RUNTIME_UNKNOWN_AGENT`` for an agent not registered.
        ModuleNotFoundError: ``a2a-sdk`` or Starlette is not installed (the ``protocols``
            extra).
    """
    require_sdk("a2a", "starlette")
    require_runtime(runtime)
    from praxo_actors.protocols._a2a_app import build

    return build(cast("Runtime", runtime), agent, card, url, allowed_hosts)
