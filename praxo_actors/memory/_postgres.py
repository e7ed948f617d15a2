"""The shared, durable memory store: PostgreSQL (psycopg 3; the ``postgres`` extra).

The same documents as :class:`~praxo_actors.memory.SQLiteStore`, in one table, with the same
namespace encoding (every label UTF-8 and a NUL byte, so that prefix search is a ``bytea``
range). Many processes and hosts may share one database: the session log's versioned commits
(:mod:`praxo_actors.memory._log`) then run inside one transaction holding a per-session
advisory lock, so two hosts racing on one session can never both commit on the same version.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

from praxo_actors._errors import MemoryStoreError
from praxo_actors.memory._base import Clock, Namespace, StoreBase, _Row

__all__ = ["PostgresStore"]

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _encode_ns(namespace: Namespace) -> bytes:
    return b"".join(label.encode("utf-8") + b"\x00" for label in namespace)


def _decode_ns(blob: bytes) -> Namespace:
    return tuple(label.decode("utf-8") for label in bytes(blob).split(b"\x00")[:-1])


class PostgresStore(StoreBase):
    """Keep documents in a PostgreSQL table; an acknowledged write is committed.

    Args:
        dsn: A libpq connection string (``"host=127.0.0.1 port=5432 dbname=praxo"``, or a
            ``postgresql://`` URL).
        schema: The schema holding the table (created if missing): one per application.
        clock: Source of the ``created_ns``/``updated_ns`` stamps (default ``time.time_ns``).

    Raises:
        ImportError: psycopg is not installed (``pip install 'praxo-actors[postgres]'``).
        MemoryStoreError: ``MEMORY_INVALID_NAMESPACE`` for a bad schema name.
        psycopg.Error: The server cannot be reached or refuses the connection.
    """

    def __init__(self, dsn: str, *, schema: str = "public", clock: Clock | None = None) -> None:
        try:
            import psycopg
        except ImportError:  # pragma: no cover - the extra is missing
            raise ImportError(
                "PostgresStore needs psycopg: pip install 'praxo-actors[postgres]'"
            ) from None
        if not isinstance(schema, str) or not _SCHEMA_NAME.fullmatch(schema):
            raise MemoryStoreError(
                "MEMORY_INVALID_NAMESPACE", f"schema must match [a-z_][a-z0-9_]*, got {schema!r}"
            )
        super().__init__(clock)
        self.dsn = dsn
        self.schema = schema
        self._table = f'"{schema}".praxo_memory_items'
        self._conn = psycopg.connect(dsn, autocommit=True)
        try:
            with self._conn.transaction():
                # ``IF NOT EXISTS`` does not hold between two connections creating the same
                # schema at once (the second fails on a unique index): one at a time.
                self._conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))",
                    (f"praxo_actors.schema:{schema}",),
                )
                self._conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
                self._conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {self._table} ("
                    'namespace bytea NOT NULL, key text COLLATE "C" NOT NULL, value text NOT NULL, '
                    "created_ns bigint NOT NULL, updated_ns bigint NOT NULL, "
                    "PRIMARY KEY (namespace, key))"
                )
        except Exception:
            self._conn.close()
            raise
        self._upsert = (
            f"INSERT INTO {self._table} (namespace, key, value, created_ns, updated_ns) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (namespace, key) DO UPDATE SET "
            f"value = excluded.value, updated_ns = greatest(excluded.updated_ns, "
            f"{self._table}.created_ns)"
        )

    def __repr__(self) -> str:
        return f"PostgresStore(schema={self.schema!r})"

    @contextlib.contextmanager
    def session_transaction(self, session_ids: Sequence[str]) -> Iterator[None]:
        """Run a block in one transaction that holds each session's advisory lock.

        The session log's writer reads the logs' heads and writes its commits inside it, so a
        commit's compare-and-set holds against every other connection (host) too.
        """
        with self._lock:
            self._check_open()
            with self._conn.transaction():
                for session_id in sorted(set(session_ids)):  # one order: no deadlock
                    self._conn.execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))", (session_id,)
                    )
                yield

    def _write(self, namespace: Namespace, key: str, text: str, now_ns: int) -> None:
        self._conn.execute(self._upsert, (_encode_ns(namespace), key, text, now_ns, now_ns))

    def _write_many(self, rows: list[tuple[Namespace, str, str]], now_ns: int) -> None:
        self._apply(rows, [], now_ns)

    def _apply(
        self,
        rows: list[tuple[Namespace, str, str]],
        deletes: list[tuple[Namespace, str]],
        now_ns: int,
    ) -> None:
        with self._conn.transaction(), self._conn.cursor() as cursor:
            if rows:
                cursor.executemany(
                    self._upsert,
                    [(_encode_ns(ns), key, text, now_ns, now_ns) for ns, key, text in rows],
                )
            if deletes:
                cursor.executemany(
                    f"DELETE FROM {self._table} WHERE namespace = %s AND key = %s",
                    [(_encode_ns(ns), key) for ns, key in deletes],
                )

    def _read(self, namespace: Namespace, key: str) -> _Row | None:
        found = self._conn.execute(
            f"SELECT value, created_ns, updated_ns FROM {self._table} "
            "WHERE namespace = %s AND key = %s",
            (_encode_ns(namespace), key),
        ).fetchone()
        return None if found is None else _Row(namespace, key, *found)

    def _read_many(self, namespace: Namespace, keys: list[str]) -> list[_Row | None]:
        rows = self._conn.execute(
            f"SELECT key, value, created_ns, updated_ns FROM {self._table} "
            "WHERE namespace = %s AND key = ANY(%s)",
            (_encode_ns(namespace), keys),
        ).fetchall()
        found = {key: _Row(namespace, key, *rest) for key, *rest in rows}
        return [found.get(key) for key in keys]

    def _remove(self, namespace: Namespace, key: str) -> bool:
        cursor = self._conn.execute(
            f"DELETE FROM {self._table} WHERE namespace = %s AND key = %s",
            (_encode_ns(namespace), key),
        )
        return cursor.rowcount > 0

    def _range(self, prefix: Namespace) -> tuple[str, tuple[Any, ...]]:
        if not prefix:
            return "", ()
        low = _encode_ns(prefix)
        return "WHERE namespace >= %s AND namespace < %s", (low, low[:-1] + b"\x01")

    def _scan(self, prefix: Namespace, offset: int, limit: int | None) -> Iterator[_Row]:
        where, params = self._range(prefix)
        rows = self._conn.execute(
            f"SELECT namespace, key, value, created_ns, updated_ns FROM {self._table} {where} "
            "ORDER BY namespace, key LIMIT %s OFFSET %s",
            (*params, limit, offset),
        ).fetchall()
        return (_Row(_decode_ns(blob), key, text, c, u) for blob, key, text, c, u in rows)

    def _namespaces(self, prefix: Namespace) -> Iterator[Namespace]:
        where, params = self._range(prefix)
        rows = self._conn.execute(
            f"SELECT DISTINCT namespace FROM {self._table} {where} ORDER BY namespace", params
        ).fetchall()
        return (_decode_ns(blob) for (blob,) in rows)

    def _close(self) -> None:
        self._conn.close()
