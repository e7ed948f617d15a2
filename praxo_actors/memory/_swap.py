"""Compare-and-set of one document: the write a claim on a shared row is made of.

``swap(store, namespace, key, old, new)`` replaces the document's canonical JSON text ``old``
with ``new`` only if the store still holds ``old`` (None: no document), and says whether it
did. It is one statement in the database for :class:`SQLiteStore` (``UPDATE ... WHERE value =
?``, or an ``INSERT`` that a row already there makes do nothing) and for
:class:`PostgresStore`, so it holds against every other connection, process and host sharing
the database; any other store swaps under its own lock (one process).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from praxo_actors.memory._base import Namespace, StoreBase, check_key, check_namespace

if TYPE_CHECKING:
    from praxo_actors.memory._postgres import PostgresStore
    from praxo_actors.memory._sqlite import SQLiteStore

__all__ = ["read_text", "swap"]


def read_text(store: StoreBase, namespace: Namespace, key: str) -> str | None:
    """Return the text stored under ``namespace`` and ``key`` (None: none), as :func:`swap`
    compares it.

    Raises:
        PraxoError: ``STORE_FAILED`` when the database fails.
        ValueError: The store is closed.
    """
    ns, key = check_namespace(namespace), check_key(key)
    with store._lock:
        store._check_open()
        (text,) = store._read_texts(ns, [key])
    return text


def swap(store: StoreBase, namespace: Namespace, key: str, old: str | None, new: str) -> bool:
    """Write ``new`` under ``namespace`` and ``key`` if the store holds ``old`` there (None: no
    document); return whether it wrote.

    Raises:
        PraxoError: ``STORE_FAILED`` when the database fails.
        ValueError: The store is closed.
    """
    ns, key = check_namespace(namespace), check_key(key)
    kind = type(store).__name__
    with store._lock:
        store._check_open()
        store._changes += 1
        now = store._clock()
        if kind == "SQLiteStore":
            return _swap_sqlite(store, ns, key, old, new, now)  # type: ignore[arg-type]
        if kind == "PostgresStore":
            return _swap_postgres(store, ns, key, old, new, now)  # type: ignore[arg-type]
        row = store._read(ns, key)
        if (None if row is None else row.text) != old:
            return False
        store._write(ns, key, new, now)
        return True


def _swap_sqlite(
    store: SQLiteStore, ns: Namespace, key: str, old: str | None, new: str, now: int
) -> bool:
    from praxo_actors.memory import _sqlite

    blob = _sqlite._encode_ns(ns)
    table = _sqlite._TABLE

    @_sqlite._guarded
    def run(self: SQLiteStore) -> bool:
        if old is None:
            cursor = self._conn.execute(
                f"INSERT INTO {table} (namespace, key, value, created_ns, updated_ns) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (namespace, key) DO NOTHING",
                (blob, key, new, now, now),
            )
        else:
            cursor = self._conn.execute(
                f"UPDATE {table} SET value = ?, updated_ns = max(?, created_ns) "
                "WHERE namespace = ? AND key = ? AND value = ?",
                (new, now, blob, key, old),
            )
        return cursor.rowcount == 1

    return run(store)


def _swap_postgres(
    store: PostgresStore, ns: Namespace, key: str, old: str | None, new: str, now: int
) -> bool:
    from praxo_actors.memory import _postgres

    blob = _postgres._encode_ns(ns)
    table = store._table

    def run(conn: Any) -> bool:
        if old is None:
            cursor = conn.execute(
                f"INSERT INTO {table} (namespace, key, value, created_ns, updated_ns) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (namespace, key) DO NOTHING",
                (blob, key, new, now, now),
            )
        else:
            cursor = conn.execute(
                f"UPDATE {table} SET value = %s, updated_ns = GREATEST(%s, created_ns) "
                "WHERE namespace = %s AND key = %s AND value = %s",
                (new, now, blob, key, old),
            )
        return bool(cursor.rowcount == 1)

    # Not run again on a lost connection: whether it wrote is then unknown (STORE_FAILED);
    # the caller reads the row again, as after any lost race.
    return bool(store._link.run(run, retry=False))
