"""Agent tools that let a model remember, recall and search documents in one namespace."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from praxo_actors._errors import PraxoError
from praxo_actors.agent import Tool, ToolError
from praxo_actors.codes import MEMORY_INVALID_ARGUMENTS, MEMORY_INVALID_VALUE, MEMORY_NOT_FOUND
from praxo_actors.memory._base import Store, check_namespace

__all__ = ["SEARCH_LIMIT_MAX", "memory_tools"]

SEARCH_LIMIT_MAX = 20
"""The largest ``limit`` the ``search`` tool accepts."""

_KEY = {"type": "string", "minLength": 1, "description": "A short, stable name for the memory."}


def memory_tools(store: Store, namespace: Sequence[str]) -> list[Tool]:
    """Return the tools ``remember``, ``recall`` and ``search``, scoped to one namespace.

    Handlers return JSON values, and report a model's mistakes by returning a
    :class:`~praxo_actors.agent.ToolError` with code ``MEMORY_INVALID_KEY``,
    ``MEMORY_INVALID_VALUE``, ``MEMORY_INVALID_ARGUMENTS`` or ``MEMORY_NOT_FOUND``. A store
    that fails (``STORE_FAILED``: its database down or damaged) is reported the same way, so
    the model learns that nothing was stored or found and the run goes on.

    Args:
        store: Any memory store (e.g. ``InMemoryStore`` or ``SQLiteStore``).
        namespace: The one namespace the tools read and write (not the ones below it).

    Raises:
        MemoryStoreError: ``MEMORY_INVALID_NAMESPACE`` for a bad namespace.
    """
    ns = check_namespace(namespace)

    def remember(args: dict[str, Any]) -> Any:
        # Arguments come from the model unchecked: the store validates them.
        key: Any = args.get("key")
        value: Any = args.get("value")
        if isinstance(value, str):
            value = {"text": value}
        elif not isinstance(value, dict):
            return ToolError(MEMORY_INVALID_VALUE, "value must be an object or a string")
        try:
            store.put(ns, key, value)
        except PraxoError as exc:
            return ToolError(exc.code, exc.message)
        return {"key": key, "stored": True}

    def recall(args: dict[str, Any]) -> Any:
        key: Any = args.get("key")
        try:
            item = store.get(ns, key)
        except PraxoError as exc:
            return ToolError(exc.code, exc.message)
        if item is None:
            return ToolError(MEMORY_NOT_FOUND, f"nothing is remembered under {key!r}")
        return {"key": item.key, "value": item.value}

    def search(args: dict[str, Any]) -> Any:
        query, limit = args.get("query"), args.get("limit", 5)
        if isinstance(limit, float) and limit.is_integer():
            limit = int(limit)  # the schema's "integer" admits 5.0, as JSON Schema does
        if not isinstance(query, str):
            return ToolError(MEMORY_INVALID_ARGUMENTS, "query must be a string")
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int)
            or not 1 <= limit <= SEARCH_LIMIT_MAX
        ):
            return ToolError(
                MEMORY_INVALID_ARGUMENTS, f"limit must be an integer from 1 to {SEARCH_LIMIT_MAX}"
            )
        results: list[dict[str, Any]] = []
        offset = 0
        # The store searches by prefix; page until `limit` items of this exact namespace are found.
        while len(results) < limit:
            try:
                page = store.search(ns, query=query, limit=limit, offset=offset)
            except PraxoError as exc:
                return ToolError(exc.code, exc.message)
            results += ({"key": i.key, "value": i.value} for i in page if i.namespace == ns)
            if len(page) < limit:
                break
            offset += limit
        return {"results": results[:limit]}

    return [
        Tool(
            "remember",
            "Remember a value under a key, replacing what the key held before. "
            'A string value is stored as {"text": value}.',
            {
                "type": "object",
                "properties": {
                    "key": _KEY,
                    "value": {"type": ["object", "string"], "description": "What to remember."},
                },
                "required": ["key", "value"],
                "additionalProperties": False,
            },
            remember,
        ),
        Tool(
            "recall",
            "Return the value remembered under a key.",
            {
                "type": "object",
                "properties": {"key": _KEY},
                "required": ["key"],
                "additionalProperties": False,
            },
            recall,
        ),
        Tool(
            "search",
            "Find remembered values whose text contains the query, ignoring case "
            "(an empty query matches everything). Results are ordered by key.",
            {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Text to look for."},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": SEARCH_LIMIT_MAX,
                        "default": 5,
                        "description": "Most results to return.",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            search,
        ),
    ]
