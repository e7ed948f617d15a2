"""The runtime's supervision tree as plain data, read through the supervisors' own API."""

from __future__ import annotations

from typing import Any

import pykka

__all__ = ["describe_tree"]


def describe_tree(root: pykka.ActorRef[Any], limit: int, timeout: float) -> dict[str, Any]:
    """Return the tree under the root supervisor as nested dicts (blocking: call off the loop).

    Each node has ``id``, ``actor`` (its class), ``type``, ``restart`` and ``alive``; a running
    supervisor also has ``counts`` (OTP's ``count_children``) and up to ``limit`` ``children``
    (``truncated`` says whether there were more, as under the sessions supervisor).
    """
    return _node("praxo-runtime", root, "supervisor", "permanent", limit, timeout)


def _node(
    id: str, ref: pykka.ActorRef[Any] | None, type: str, restart: str, limit: int, timeout: float
) -> dict[str, Any]:
    alive = ref is not None and ref.is_alive()
    node: dict[str, Any] = {
        "id": id,
        "actor": None if ref is None else ref.actor_class.__name__,
        "type": type,
        "restart": restart,
        "alive": alive,
    }
    if type != "supervisor" or not alive:
        return node
    assert ref is not None
    try:
        proxy = ref.proxy()
        counts = proxy.count_children().get(timeout=timeout)
        records = proxy.which_children().get(timeout=timeout)
    except (pykka.ActorDeadError, pykka.Timeout):
        node["alive"] = False  # stopped (or too busy to answer) while it was being read
        return node
    node["counts"] = {
        "specs": counts.specs,
        "active": counts.active,
        "supervisors": counts.supervisors,
        "workers": counts.workers,
    }
    node["children"] = [
        _node(str(r.id), r.ref, r.type, r.restart, limit, timeout) for r in records[:limit]
    ]
    node["truncated"] = len(records) > limit
    return node
