"""The shared, durable memory store: PostgreSQL (psycopg 3; the ``postgres`` extra).

The same documents as :class:`~praxo_actors.memory.SQLiteStore`, in one table, with the same
namespace encoding (every label UTF-8 and a NUL byte, so that prefix search is a ``bytea``
range). Many processes and hosts may share one database: the session log's versioned commits
(:mod:`praxo_actors.memory._log`) then run inside one transaction holding a per-session
advisory lock, so two hosts racing on one session can never both commit on the same version.

The store outlives its connection: its :class:`~praxo_actors.memory._pg_link.Link` reconnects
with bounded backoff when the server restarts or the connection drops, and runs again what is
safe to run again (that module says what is). While the server stays down, calls fail
``STORE_FAILED`` at once; each attempt to reconnect is bounded by ``connect_timeout``. No
psycopg error reaches a caller: every one becomes ``STORE_FAILED``.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from praxo_actors._errors import MemoryStoreError, PraxoError
from praxo_actors.codes import MEMORY_INVALID_NAMESPACE, STORE_FAILED
from praxo_actors.memory._backoff import Backoff
from praxo_actors.memory._base import Clock, Namespace, StoreBase, _Row
from praxo_actors.memory._pg_link import Link

try:
    import psycopg
    from psycopg import conninfo as _conninfo
except ImportError:  # pragma: no cover - the extra is missing: the constructor says so
    psycopg = None  # type: ignore[assignment]

if TYPE_CHECKING:
    Connection = psycopg.Connection[Any]

__all__ = ["PostgresStore"]

T = TypeVar("T")

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

# libpq waits on a peer that vanished (a host powered off, a partition) as long as the OS does,
# which is up to hours; with these a dead connection is found within 10 + 5 * 3 = 25 s.
_CONNECTION_DEFAULTS = {
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "5",
    "keepalives_count": "3",
    "application_name": "praxo_actors",
}

_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))"


def _encode_ns(namespace: Namespace) -> bytes:
    return b"".join(label.encode("utf-8") + b"\x00" for label in namespace)


def _decode_ns(blob: bytes) -> Namespace:
    try:
        return tuple(label.decode("utf-8") for label in bytes(blob).split(b"\x00")[:-1])
    except UnicodeDecodeError as exc:  # only a row written past the store could hold this
        raise PraxoError(STORE_FAILED, f"a stored namespace is not UTF-8: {exc}") from None


class PostgresStore(StoreBase):
    """Keep documents in a PostgreSQL table; an acknowledged write is committed.

    Args:
        dsn: A libpq connection string (``"host=127.0.0.1 port=5432 dbname=praxo"``, or a
            ``postgresql://`` URL). Its own ``connect_timeout``, keepalive or
            ``application_name`` settings win over the store's defaults.
        schema: The schema holding the table (created if missing): one per application.
        clock: Source of the ``created_ns``/``updated_ns`` stamps (default ``time.time_ns``).
        connect_timeout: Seconds each connection attempt may take (libpq counts whole seconds,
            at least 2).
        max_reconnect_delay: The longest wait, in seconds, between two attempts to reconnect
            while the server is unreachable (the first attempt is at once; the delays double
            from 0.05 s, with jitter, up to this).
        monotonic: Source of seconds for those delays (``time.monotonic``); injected by tests.

    Raises:
        ImportError: psycopg is not installed (``pip install 'praxo-actors[postgres]'``).
        MemoryStoreError: ``MEMORY_INVALID_NAMESPACE`` for a bad schema name.
        PraxoError: ``STORE_FAILED`` when ``dsn`` is not a connection string or the server
            cannot be reached or refuses the connection.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "public",
        clock: Clock | None = None,
        connect_timeout: float = 5.0,
        max_reconnect_delay: float = 2.0,
        monotonic: Callable[[], float] | None = None,
    ) -> None:
        if psycopg is None:  # pragma: no cover - the extra is missing
            raise ImportError("PostgresStore needs psycopg: pip install 'praxo-actors[postgres]'")
        if not isinstance(schema, str) or not _SCHEMA_NAME.fullmatch(schema):
            raise MemoryStoreError(
                MEMORY_INVALID_NAMESPACE, f"schema must match [a-z_][a-z0-9_]*, got {schema!r}"
            )
        if not connect_timeout > 0:
            raise ValueError(f"connect_timeout must be positive, got {connect_timeout!r}")
        super().__init__(clock)
        self.dsn = dsn
        self.schema = schema
        self._table = f'"{schema}".praxo_memory_items'
        backoff = Backoff(
            maximum=max_reconnect_delay,
            monotonic=time.monotonic if monotonic is None else monotonic,
        )
        self._link = Link(_with_defaults(dsn, connect_timeout), backoff)
        try:
            self._link.transaction(self._create_schema)
        except BaseException:
            self._link.close()
            raise
        self._upsert = (
            f"INSERT INTO {self._table} (namespace, key, value, created_ns, updated_ns) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (namespace, key) DO UPDATE SET "
            f"value = excluded.value, updated_ns = greatest(excluded.updated_ns, "
            f"{self._table}.created_ns)"
        )

    def __repr__(self) -> str:
        return f"PostgresStore(schema={self.schema!r})"

    @property
    def connections(self) -> int:
        """How many connections the store has opened: the first, then one per reconnection."""
        return self._link.connections

    @property
    def _conn(self) -> Connection | None:
        return self._link.connection

    def _create_schema(self, conn: Connection) -> None:
        # ``IF NOT EXISTS`` does not hold between two connections creating the same schema at
        # once (the second fails on a unique index): one at a time.
        conn.execute(_LOCK, (f"praxo_actors.schema:{self.schema}",))
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {self._table} ("
            'namespace bytea NOT NULL, key text COLLATE "C" NOT NULL, value text NOT NULL, '
            "created_ns bigint NOT NULL, updated_ns bigint NOT NULL, "
            "PRIMARY KEY (namespace, key))"
        )

    def session_transaction(self, session_ids: Sequence[str], work: Callable[[], T]) -> T:
        """Run ``work`` in one transaction that holds each session's advisory lock.

        The session log's writer reads the logs' heads and writes its commits inside it, so a
        commit's compare-and-set holds against every other connection (host) too. When the
        connection is lost before the ``COMMIT``, or during it and the server then says the
        transaction aborted, ``work`` runs once more on a new connection (it re-reads the heads
        there: the first attempt left nothing behind); when the server says it committed, its
        result is returned.

        Raises:
            PraxoError: ``STORE_FAILED`` when the server cannot be reached, or the connection
                was lost during the ``COMMIT`` and the server cannot say how it ended.
        """
        ids = sorted(set(session_ids))  # one order for every host: no deadlock

        def locked(conn: Connection) -> T:
            for session_id in ids:
                conn.execute(_LOCK, (session_id,))
            return work()

        with self._lock:
            self._check_open()
            return self._link.transaction(locked, settle=True)

    def read_snapshot(self, work: Callable[[], T]) -> T:
        """Run ``work``'s reads in one ``REPEATABLE READ`` read-only transaction.

        The session log reads a session's snapshot, head and records in several statements;
        in one snapshot of the database they show one version, even while another host
        commits a new snapshot and drops the records the reads are about to fetch.

        Raises:
            PraxoError: ``STORE_FAILED`` when the server cannot be reached.
        """

        def consistent(conn: Connection) -> T:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return work()

        with self._lock:
            self._check_open()
            return self._link.transaction(consistent)  # only reads: safe to run again

    # -- the store's hooks -------------------------------------------------------------------

    def _write(self, namespace: Namespace, key: str, text: str, now_ns: int) -> None:
        params = (_encode_ns(namespace), key, text, now_ns, now_ns)
        self._link.run(lambda conn: conn.execute(self._upsert, params), retry=False)

    def _write_many(self, rows: list[tuple[Namespace, str, str]], now_ns: int) -> None:
        self._apply(rows, [], now_ns)

    def _apply(
        self,
        rows: list[tuple[Namespace, str, str]],
        deletes: list[tuple[Namespace, str]],
        now_ns: int,
    ) -> None:
        upserts = [(_encode_ns(ns), key, text, now_ns, now_ns) for ns, key, text in rows]
        removed = [(_encode_ns(ns), key) for ns, key in deletes]

        def work(conn: Connection) -> None:
            with conn.cursor() as cursor:
                if upserts:
                    cursor.executemany(self._upsert, upserts)
                if removed:
                    cursor.executemany(
                        f"DELETE FROM {self._table} WHERE namespace = %s AND key = %s", removed
                    )

        self._link.transaction(work)

    def _read(self, namespace: Namespace, key: str) -> _Row | None:
        params = (_encode_ns(namespace), key)
        found = self._link.run(
            lambda conn: conn.execute(
                f"SELECT value, created_ns, updated_ns FROM {self._table} "
                "WHERE namespace = %s AND key = %s",
                params,
            ).fetchone(),
            retry=True,
        )
        return None if found is None else _Row(namespace, key, *found)

    def _read_many(self, namespace: Namespace, keys: list[str]) -> list[_Row | None]:
        params = (_encode_ns(namespace), keys)
        rows = self._link.run(
            lambda conn: conn.execute(
                f"SELECT key, value, created_ns, updated_ns FROM {self._table} "
                "WHERE namespace = %s AND key = ANY(%s)",
                params,
            ).fetchall(),
            retry=True,
        )
        found = {key: _Row(namespace, key, *rest) for key, *rest in rows}
        return [found.get(key) for key in keys]

    def _remove(self, namespace: Namespace, key: str) -> bool:
        params = (_encode_ns(namespace), key)
        cursor = self._link.run(
            lambda conn: conn.execute(
                f"DELETE FROM {self._table} WHERE namespace = %s AND key = %s", params
            ),
            retry=False,
        )
        return cursor.rowcount > 0

    def _range(self, prefix: Namespace) -> tuple[str, tuple[Any, ...]]:
        if not prefix:
            return "", ()
        low = _encode_ns(prefix)
        return "WHERE namespace >= %s AND namespace < %s", (low, low[:-1] + b"\x01")

    def _scan(self, prefix: Namespace, offset: int, limit: int | None) -> Iterator[_Row]:
        where, params = self._range(prefix)
        rows = self._link.run(
            lambda conn: conn.execute(
                f"SELECT namespace, key, value, created_ns, updated_ns FROM {self._table} "
                f"{where} ORDER BY namespace, key LIMIT %s OFFSET %s",
                (*params, limit, offset),
            ).fetchall(),
            retry=True,
        )
        return iter([_Row(_decode_ns(blob), key, text, c, u) for blob, key, text, c, u in rows])

    def _namespaces(self, prefix: Namespace) -> Iterator[Namespace]:
        where, params = self._range(prefix)
        rows = self._link.run(
            lambda conn: conn.execute(
                f"SELECT DISTINCT namespace FROM {self._table} {where} ORDER BY namespace", params
            ).fetchall(),
            retry=True,
        )
        return iter([_decode_ns(blob) for (blob,) in rows])

    def _close(self) -> None:
        self._link.close()


def _with_defaults(dsn: str, connect_timeout: float) -> str:
    """Return ``dsn`` with the store's connection defaults for what it leaves unset.

    Raises:
        PraxoError: ``STORE_FAILED`` when ``dsn`` is not a connection string.
    """
    if not isinstance(dsn, str):
        raise PraxoError(STORE_FAILED, f"dsn must be a str, got {type(dsn).__name__}")
    try:
        params: dict[str, Any] = _conninfo.conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        raise PraxoError(STORE_FAILED, f"not a PostgreSQL connection string: {exc}") from None
    for name, value in _CONNECTION_DEFAULTS.items():
        params.setdefault(name, value)
    params.setdefault("connect_timeout", str(max(2, math.ceil(connect_timeout))))
    return _conninfo.make_conninfo("", **params)
