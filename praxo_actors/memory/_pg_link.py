"""A PostgreSQL connection that outlives its server: it reconnects and runs again what is safe.

:class:`Link` owns one psycopg connection on behalf of a :class:`PostgresStore` (and is used
under that store's lock). What it does when the connection is lost depends on when:

- *Found lost before a call* — the server closed it while idle (a restart, a
  ``pg_terminate_backend``; the server says so on the socket, which is checked before each
  call): the call runs on a new connection, whatever it is.
- *Lost during a read*: the read runs again on a new connection.
- *Lost during a write outside a transaction* (``put``, ``delete``): the write may have applied,
  and running it again could undo another client's write made meanwhile: ``STORE_FAILED``.
- *Lost in a transaction before its* ``COMMIT``: the server rolled it back, so it runs again,
  once, on a new connection.
- *Lost during the* ``COMMIT``: the outcome is unknown. A transaction run with ``settle``
  (the session log's commits are) recorded its id, and is settled by asking the server
  (``txid_status``, after waiting for the transaction's end if its backend is still ending
  it): committed, the call returns its result; aborted, it runs again. Otherwise, or when the
  server cannot say: ``STORE_FAILED``.

Reconnection attempts are spaced by a :class:`~praxo_actors.memory._backoff.Backoff`; calls
between them fail ``STORE_FAILED`` at once. Every psycopg error becomes ``STORE_FAILED``.
"""

from __future__ import annotations

import contextlib
import select
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from praxo_actors._errors import PraxoError
from praxo_actors.codes import STORE_FAILED
from praxo_actors.memory._backoff import Backoff

try:
    import psycopg
except ImportError:  # pragma: no cover - the extra is missing: PostgresStore says so
    psycopg = None  # type: ignore[assignment]

if TYPE_CHECKING:
    Connection = psycopg.Connection[Any]

__all__ = ["Link"]

T = TypeVar("T")

# A settled transaction reads its id and takes an advisory lock on it, held until it ends: so
# a later connection can wait for its end (taking the same lock) when the server still has it
# "in progress". The two-key form keeps these locks apart from the sessions' one-key ones.
_XID_LOCKS = 0x70726178
_XID = "SELECT txid_current(), pg_advisory_xact_lock(%s, (txid_current() %% 2147483648)::int)"
_WAIT = "SELECT pg_advisory_xact_lock(%s, %s)"
_SETTLE_WAIT_MS = 5000  # an ending backend rolls back in milliseconds


def failed(exc: BaseException) -> PraxoError:
    """Return the ``STORE_FAILED`` error standing for a psycopg error."""
    return PraxoError(STORE_FAILED, f"PostgreSQL: {type(exc).__name__}: {exc}")


class _Again(Exception):
    """A transaction the server settled as aborted after its connection was lost: run again."""


class Link:
    """Own one connection; run work on it, reconnecting and retrying as the module says.

    Args:
        conninfo: The libpq connection string.
        backoff: When reconnection attempts may start.
    """

    def __init__(self, conninfo: str, backoff: Backoff) -> None:
        self._conninfo = conninfo
        self._backoff = backoff
        self._conn: Connection | None = None
        self._in_transaction = False
        self.connections = 0
        """How many connections were opened (the first, then one per reconnection)."""

    @property
    def connection(self) -> Connection | None:
        """The current connection, if any (None while the server is unreachable)."""
        return self._conn

    def run(self, work: Callable[[Connection], T], *, retry: bool) -> T:
        """Run ``work`` on the connection, reconnecting first if it is found lost.

        Inside :meth:`transaction` ``work`` runs on the transaction's connection, its errors
        left to the transaction. Otherwise every error becomes ``STORE_FAILED``, after one
        more run on a new connection when the connection was lost and ``retry`` says ``work``
        may run twice.

        Raises:
            PraxoError: ``STORE_FAILED``.
        """
        if self._in_transaction:
            assert self._conn is not None
            return work(self._conn)
        conn = self._connection()
        try:
            return work(conn)
        except (psycopg.Error, _Again) as exc:
            if not (self._lost(conn) and retry):
                raise failed(exc) from None
        conn = self._connection()  # the first attempt after a loss is at once
        try:
            return work(conn)
        except (psycopg.Error, _Again) as exc:
            self._lost(conn)
            raise failed(exc) from None

    def transaction(self, work: Callable[[Connection], T], *, settle: bool = False) -> T:
        """Run ``work`` in one transaction (inside an enclosing one: as part of it).

        Args:
            work: What to run; it may run twice (the first attempt then left nothing behind).
            settle: Record the transaction's id, by which a ``COMMIT`` whose connection was
                lost is settled (one more statement); without it such a commit fails.

        Raises:
            PraxoError: ``STORE_FAILED``.
        """
        if self._in_transaction:
            assert self._conn is not None
            return work(self._conn)
        return self.run(lambda conn: self._attempt(conn, work, settle), retry=True)

    def _attempt(self, conn: Connection, work: Callable[[Connection], T], settle: bool) -> T:
        committing = False
        txid: int | None = None
        self._in_transaction = True
        try:
            with conn.transaction():
                if settle:
                    row = conn.execute(_XID, (_XID_LOCKS,)).fetchone()
                    txid = None if row is None else row[0]
                result = work(conn)
                committing = True
        except psycopg.Error as exc:
            if not committing:
                raise  # rolled back: run() may run it again
            if not self._lost(conn):
                raise failed(exc) from None  # refused at COMMIT (nothing applied)
            outcome = self._settle(txid)
            if outcome is True:
                return result
            if outcome is False:
                raise _Again("the connection was lost during COMMIT; it was rolled back") from None
            raise PraxoError(
                STORE_FAILED,
                "PostgreSQL: the connection was lost during COMMIT: the transaction may or "
                f"may not have applied ({exc})",
            ) from None
        finally:
            self._in_transaction = False
        return result

    def _settle(self, txid: int | None) -> bool | None:
        """Whether transaction ``txid`` committed (True), aborted (False), or is unknown."""
        if txid is None:
            return None
        try:
            conn = self._connection()
            status = _status(conn, txid)
            if status == "in progress":  # its backend has not ended it yet: wait until it has
                with conn.transaction():
                    conn.execute(f"SET LOCAL lock_timeout = '{_SETTLE_WAIT_MS}ms'")
                    conn.execute(_WAIT, (_XID_LOCKS, txid % 2**31))
                status = _status(conn, txid)
        except (PraxoError, psycopg.Error):
            return None
        return {"committed": True, "aborted": False}.get(status)

    def _connection(self) -> Connection:
        """Return the open connection, or open one when the backoff allows.

        Raises:
            PraxoError: ``STORE_FAILED`` when the attempt fails or is not yet due.
        """
        conn = self._conn
        if conn is not None and not conn.closed and not _hung_up(conn):
            return conn
        self.close()
        wait = self._backoff.remaining()
        if wait > 0:
            raise PraxoError(
                STORE_FAILED,
                f"PostgreSQL is unreachable ({self._backoff.failures} failed attempts to "
                f"connect); the next attempt is due in {wait:.2f} s",
            )
        try:
            conn = psycopg.connect(self._conninfo, autocommit=True)
        except psycopg.Error as exc:
            delay = self._backoff.failed()
            raise PraxoError(
                STORE_FAILED,
                f"cannot connect to PostgreSQL (next attempt in {delay:.2f} s): {exc}",
            ) from None
        self._backoff.succeeded()
        self._conn = conn
        self.connections += 1
        return conn

    def _lost(self, conn: Connection) -> bool:
        """Whether ``conn`` is gone; if so it is dropped, and the next call reconnects."""
        if not conn.closed:
            return False
        if conn is self._conn:
            self.close()
        return True

    def close(self) -> None:
        """Close the connection (the next call opens a new one)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                conn.close()


def _status(conn: Connection, txid: int) -> str:
    row = conn.execute("SELECT txid_status(%s)", (txid,)).fetchone()
    return str(None if row is None else row[0])


def _hung_up(conn: Connection) -> bool:
    """Whether the server has spoken on an idle connection: it does so only to end it (a
    shutdown, ``pg_terminate_backend``), so the connection is as good as lost."""
    try:
        readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(readable)
