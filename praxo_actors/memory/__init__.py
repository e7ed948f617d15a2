"""Memory stores: namespaced JSON documents, after LangGraph's store.

A document is a JSON object stored under a *namespace* (a non-empty tuple of labels, e.g.
``("users", "ada")``) and a *key*. Both backends, :class:`InMemoryStore` and the durable
:class:`SQLiteStore`, validate and behave alike:

- a namespace label and a key are non-empty strings without NUL (any other character,
  ``.``, ``/``, ``%`` or ``_`` included, is fine); a list is accepted for a tuple;
- a value is a ``dict`` that encodes as JSON (finite numbers, str keys);
- values are copied in and out: mutating a ``put`` argument or a returned value later
  never changes what is stored;
- ``search`` and ``list_namespaces`` return results in a fixed order: namespaces label by
  label in code-point order (a namespace before those below it), then keys in code-point order.

Codes: ``MEMORY_INVALID_NAMESPACE``, ``MEMORY_INVALID_KEY``, ``MEMORY_INVALID_VALUE``
(also for a ``filter`` that is not a JSON object), and ``MEMORY_SCHEMA_VERSION`` for a SQLite
file written by an unknown schema. Plain argument mistakes (a negative ``limit``, a non-str
``query``) raise ``ValueError`` / ``TypeError``, as Python's own APIs do. A database that fails
raises a ``PraxoError``, never the driver's own exception: ``STORE_CORRUPT`` when a SQLite file
is not a sound store database at open, ``STORE_FAILED`` for any call the database failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from praxo_actors._errors import MemoryStoreError
from praxo_actors.memory._base import Clock, Namespace, Store
from praxo_actors.memory._inmemory import InMemoryStore
from praxo_actors.memory._item import Item
from praxo_actors.memory._tools import memory_tools

if TYPE_CHECKING:
    from praxo_actors.memory._postgres import PostgresStore
    from praxo_actors.memory._sqlite import SQLiteStore

__all__ = [
    "Clock",
    "InMemoryStore",
    "Item",
    "MemoryStoreError",
    "Namespace",
    "PostgresStore",
    "SQLiteStore",
    "Store",
    "memory_tools",
]


def __getattr__(name: str) -> Any:
    """Import :class:`SQLiteStore` (and with it ``sqlite3``) or :class:`PostgresStore` on first
    access (PEP 562)."""
    if name == "SQLiteStore":
        from praxo_actors.memory._sqlite import SQLiteStore

        globals()[name] = SQLiteStore
        return SQLiteStore
    if name == "PostgresStore":
        from praxo_actors.memory._postgres import PostgresStore

        globals()[name] = PostgresStore
        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
