"""The embedded, durable memory store: one SQLite file in WAL mode.

Namespaces are stored as a BLOB in which every label is UTF-8 followed by a NUL byte (labels
never contain NUL). Byte order of that BLOB is label-by-label code-point order with a shorter
namespace first, which is exactly Python's tuple order; and the namespaces below a prefix ``P``
are exactly the BLOBs in ``[P, P[:-1] + b"\\x01")``, so prefix search is an index range with no
LIKE pattern to escape, whatever characters (``%``, ``_``, ``/``, ``.``) the labels hold.

No ``sqlite3`` error reaches a caller. Opening a file that is not a store's database — not
SQLite at all, a zeroed header, truncated, garbage pages — fails ``STORE_CORRUPT``: the open
checks every page (``PRAGMA quick_check``, about 1.2 ms per MB of file). A call on an open store
that SQLite fails (a page found corrupt later, a full disk, a lock held past ``timeout``) raises
``STORE_FAILED`` and leaves the store usable for the calls that can still succeed.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

from praxo_actors._errors import MemoryStoreError, PraxoError
from praxo_actors.codes import MEMORY_SCHEMA_VERSION, STORE_CORRUPT, STORE_FAILED
from praxo_actors.memory._base import Clock, Namespace, StoreBase, _Row

__all__ = ["SQLiteStore"]

SCHEMA_VERSION = 1
"""The schema this code reads and writes, kept in SQLite's ``user_version`` pragma."""

_TABLE = "praxo_memory_items"
_CREATE = f"""
CREATE TABLE {_TABLE} (
    namespace BLOB NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    created_ns INTEGER NOT NULL,
    updated_ns INTEGER NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID
"""
_UPSERT = f"""
INSERT INTO {_TABLE} (namespace, key, value, created_ns, updated_ns) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (namespace, key) DO UPDATE SET
    value = excluded.value, updated_ns = max(excluded.updated_ns, {_TABLE}.created_ns)
"""
_COLUMNS = "namespace, key, value, created_ns, updated_ns"

# What SQLite answers for a file that is damaged or not a database at all.
_CORRUPT = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}

P = ParamSpec("P")
T = TypeVar("T")


def _corrupt(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in _CORRUPT


def _failed(exc: sqlite3.Error | UnicodeDecodeError) -> PraxoError:
    damaged = _corrupt(exc) or isinstance(exc, UnicodeDecodeError)
    what = "the database file is corrupt" if damaged else "the call failed"
    return PraxoError(STORE_FAILED, f"SQLite: {what}: {type(exc).__name__}: {exc}")


def _guarded(
    hook: Callable[Concatenate[SQLiteStore, P], T],
) -> Callable[Concatenate[SQLiteStore, P], T]:
    """Make a store hook raise ``STORE_FAILED`` where SQLite raises its own error."""

    @functools.wraps(hook)
    def guarded(self: SQLiteStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return hook(self, *args, **kwargs)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            raise _failed(exc) from None

    return guarded


def _encode_ns(namespace: Namespace) -> bytes:
    return b"".join(label.encode("utf-8") + b"\x00" for label in namespace)


# Scans decode one BLOB per row, and rows share few namespaces: caching halves a scan's cost.
@functools.lru_cache(maxsize=4096)
def _decode_ns(blob: bytes) -> Namespace:
    return tuple(label.decode("utf-8") for label in blob.split(b"\x00")[:-1])


def _prefix_range(prefix: Namespace) -> tuple[str, tuple[bytes, ...]]:
    """Return a WHERE clause and its parameters selecting namespaces that start with ``prefix``."""
    if not prefix:
        return "", ()
    low = _encode_ns(prefix)
    return "WHERE namespace >= ? AND namespace < ?", (low, low[:-1] + b"\x01")


class SQLiteStore(StoreBase):
    """Keep documents in a SQLite database file; an acknowledged ``put`` is on disk.

    The connection runs in autocommit mode, so each ``put`` or ``delete`` is its own
    transaction, committed before the call returns. With ``synchronous="FULL"`` (the default)
    SQLite fsyncs the write-ahead log at every commit, so an acknowledged write survives a
    process kill *and* an OS crash or power loss. ``"NORMAL"`` skips that fsync: writes still
    survive a killed process (they are in the OS page cache), but the last ones may be lost on
    power loss, in exchange for many more writes per second.

    One connection serves every thread, behind the store's lock, so ``":memory:"`` works and a
    store may be shared by threads. Other processes may open the same file (WAL allows
    concurrent readers; writers wait up to ``timeout`` seconds for the lock).

    Args:
        path: The database file (created if missing), or ``":memory:"``.
        synchronous: ``"FULL"`` or ``"NORMAL"``, as above.
        timeout: Seconds to wait for another connection's write lock.
        clock: Source of the ``created_ns``/``updated_ns`` stamps (default ``time.time_ns``).
        verify: Check every page at open (``PRAGMA quick_check``: about 1.2 ms per MB), so that
            a damaged file fails here rather than at the first call that reads a bad page.
            False checks only what opening reads (the header, the schema): a damaged page is
            then found by the call that reads it, which raises ``STORE_FAILED``.

    Raises:
        MemoryStoreError: ``MEMORY_SCHEMA_VERSION`` when the file holds a schema version
            this code does not know.
        PraxoError: ``STORE_CORRUPT`` when the file is not a SQLite database, or one that
            fails SQLite's check of its pages, or holds the version but not the table;
            ``STORE_FAILED`` when it cannot be opened (a directory, no permission, locked
            by another connection past ``timeout``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["FULL", "NORMAL"] = "FULL",
        timeout: float = 5.0,
        clock: Clock | None = None,
        verify: bool = True,
    ) -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be 'FULL' or 'NORMAL', got {synchronous!r}")
        super().__init__(clock)
        self.path = os.fspath(path)
        try:
            conn = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise PraxoError(STORE_FAILED, f"cannot open {self.path}: {exc}") from None
        try:
            _open(conn, self.path, synchronous, verify)
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    @_guarded
    def _write(self, namespace: Namespace, key: str, text: str, now_ns: int) -> None:
        self._conn.execute(_UPSERT, (_encode_ns(namespace), key, text, now_ns, now_ns))

    @_guarded
    def _write_many(self, rows: list[tuple[Namespace, str, str]], now_ns: int) -> None:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.executemany(
                _UPSERT, [(_encode_ns(ns), key, text, now_ns, now_ns) for ns, key, text in rows]
            )
        except BaseException:
            self._rollback()
            raise
        self._conn.execute("COMMIT")

    @_guarded
    def _apply(
        self,
        rows: list[tuple[Namespace, str, str]],
        deletes: list[tuple[Namespace, str]],
        now_ns: int,
    ) -> None:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.executemany(
                _UPSERT, [(_encode_ns(ns), key, text, now_ns, now_ns) for ns, key, text in rows]
            )
            self._conn.executemany(
                f"DELETE FROM {_TABLE} WHERE namespace = ? AND key = ?",
                [(_encode_ns(ns), key) for ns, key in deletes],
            )
        except BaseException:
            self._rollback()
            raise
        self._conn.execute("COMMIT")

    @_guarded
    def _read(self, namespace: Namespace, key: str) -> _Row | None:
        found = self._conn.execute(
            f"SELECT value, created_ns, updated_ns FROM {_TABLE} WHERE namespace = ? AND key = ?",
            (_encode_ns(namespace), key),
        ).fetchone()
        return None if found is None else _Row(namespace, key, *found)

    @_guarded
    def _read_many(self, namespace: Namespace, keys: list[str]) -> list[_Row | None]:
        found: dict[str, _Row] = {}
        ns = _encode_ns(namespace)
        # SQLite allows 32,766 parameters per statement (since 3.32); stay well below.
        for start in range(0, len(keys), 900):
            chunk = keys[start : start + 900]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT key, value, created_ns, updated_ns FROM {_TABLE} "
                f"WHERE namespace = ? AND key IN ({marks})",
                (ns, *chunk),
            ).fetchall()
            for key, *rest in rows:
                found[key] = _Row(namespace, key, *rest)
        return [found.get(key) for key in keys]

    @_guarded
    def _read_texts(self, namespace: Namespace, keys: list[str]) -> list[str | None]:
        # The session log's reads: the text alone, and one key (a commit's head) by the
        # single-row statement, which SQLite's statement cache keeps compiled.
        ns = _encode_ns(namespace)
        if len(keys) == 1:
            found = self._conn.execute(
                f"SELECT value FROM {_TABLE} WHERE namespace = ? AND key = ?", (ns, keys[0])
            ).fetchone()
            return [None if found is None else found[0]]
        texts: dict[str, str] = {}
        for start in range(0, len(keys), 900):  # as _read_many: well below SQLite's limit
            chunk = keys[start : start + 900]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT key, value FROM {_TABLE} WHERE namespace = ? AND key IN ({marks})",
                (ns, *chunk),
            ).fetchall()
            texts.update(rows)
        return [texts.get(key) for key in keys]

    @_guarded
    def _remove(self, namespace: Namespace, key: str) -> bool:
        cursor = self._conn.execute(
            f"DELETE FROM {_TABLE} WHERE namespace = ? AND key = ?", (_encode_ns(namespace), key)
        )
        return cursor.rowcount > 0

    def _scan(self, prefix: Namespace, offset: int, limit: int | None) -> Iterator[_Row]:
        where, params = _prefix_range(prefix)
        try:
            cursor = self._conn.execute(
                f"SELECT {_COLUMNS} FROM {_TABLE} {where} ORDER BY namespace, key LIMIT ? OFFSET ?",
                (*params, -1 if limit is None else limit, offset),
            )
            try:
                for blob, key, text, created, updated in cursor:
                    yield _Row(_decode_ns(blob), key, text, created, updated)
            finally:
                # Ends the statement's read transaction even when the caller stops early.
                cursor.close()
        except (sqlite3.Error, UnicodeDecodeError) as exc:  # a generator: no guard sees it
            raise _failed(exc) from None

    @_guarded
    def _namespaces(self, prefix: Namespace) -> Iterator[Namespace]:
        where, params = _prefix_range(prefix)
        cursor = self._conn.execute(
            f"SELECT DISTINCT namespace FROM {_TABLE} {where} ORDER BY namespace", params
        )
        return iter([_decode_ns(blob) for (blob,) in cursor.fetchall()])  # decoded in the guard

    def _rollback(self) -> None:
        # A ROLLBACK that fails too (the file is gone bad) must not hide the first error;
        # SQLite has then rolled the transaction back itself.
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute("ROLLBACK")

    def _close(self) -> None:
        with contextlib.suppress(sqlite3.Error):  # nothing a caller could do about it
            self._conn.close()


def _open(conn: sqlite3.Connection, path: str, synchronous: str, verify: bool) -> None:
    """Configure a new connection, then create or check the schema (and every page).

    Raises:
        PraxoError: ``STORE_CORRUPT`` or ``STORE_FAILED``, as :class:`SQLiteStore` says.
        MemoryStoreError: ``MEMORY_SCHEMA_VERSION``.
    """
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        _migrate(conn)
        _check(conn, path, verify)
    except sqlite3.Error as exc:
        if _corrupt(exc):
            raise PraxoError(
                STORE_CORRUPT, f"{path} is not a sound SQLite database: {exc}"
            ) from None
        raise PraxoError(STORE_FAILED, f"cannot open {path}: {type(exc).__name__}: {exc}") from None


def _check(conn: sqlite3.Connection, path: str, verify: bool) -> None:
    """Check that the table is there and (``verify``) that SQLite finds every page sound.

    Raises:
        PraxoError: ``STORE_CORRUPT`` for a missing table or a damaged page.
        sqlite3.Error: SQLite's own when it cannot read a page at all.
    """
    found = conn.execute("SELECT type FROM sqlite_master WHERE name = ?", (_TABLE,)).fetchone()
    if found is None or found[0] != "table":
        raise PraxoError(STORE_CORRUPT, f"{path} has the store's version but not its table")
    if not verify:
        return
    # quick_check reads every page and checks the b-trees (not the indexes against the
    # table: integrity_check's extra work, which this table, WITHOUT ROWID, has none of).
    problems = [row[0] for row in conn.execute("PRAGMA quick_check(5)").fetchall()]
    if problems != ["ok"]:
        found = "; ".join(str(problem).replace("\n", "; ") for problem in problems)
        raise PraxoError(STORE_CORRUPT, f"{path} is damaged: {found}")


def _migrate(conn: sqlite3.Connection) -> None:
    """Create the schema in a new database, or check the version of an existing one."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version: Any = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            conn.execute(_CREATE)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        elif version != SCHEMA_VERSION:
            raise MemoryStoreError(
                MEMORY_SCHEMA_VERSION,
                f"database schema version {version} is not {SCHEMA_VERSION}",
            )
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
