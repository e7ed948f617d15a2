"""Run the memory vectors against every store backend: all must give the same outcomes.

``PostgresStore`` joins when psycopg (the ``postgres`` extra) is installed and a server is there:
``PRAXO_POSTGRES_DSN``, or one started on loopback from the local binaries for the run (each case
in a schema of its own). Without either, the group runs on the other backends and its
``notes()`` say what ``PostgresStore`` needs.
"""

from __future__ import annotations

import atexit
import itertools
import os
from collections.abc import Callable
from typing import Any

from conformance._runner import Case, CaseFailure, expect_outcome
from praxo_actors.memory import InMemoryStore, Item, SQLiteStore
from praxo_actors.memory._base import Clock, StoreBase

BACKENDS: dict[str, Callable[[Clock], StoreBase]] = {
    "InMemoryStore": lambda clock: InMemoryStore(clock=clock),
    "SQLiteStore": lambda clock: SQLiteStore(":memory:", clock=clock),
}

_server: dict[str, Any] = {}
_schemas = itertools.count(1)


def _postgres_dsn() -> str | None:
    """The server for this run (started on first use, stopped at exit), or None."""
    if "dsn" not in _server:
        dsn = os.environ.get("PRAXO_POSTGRES_DSN")
        if dsn is None:
            from praxo_actors.testing._postgres import local_postgres, postgres_binaries

            if postgres_binaries() is not None:
                server = local_postgres()
                dsn = server.__enter__()
                atexit.register(server.__exit__, None, None, None)
        _server["dsn"] = dsn
    found: str | None = _server["dsn"]
    return found


def _postgres(clock: Clock) -> StoreBase:
    from praxo_actors.memory import PostgresStore

    dsn = _postgres_dsn()
    assert dsn is not None
    schema = f"praxo_conformance_{os.getpid()}_{next(_schemas)}"
    return PostgresStore(dsn, schema=schema, clock=clock)


def _postgres_missing() -> str | None:
    """What ``PostgresStore`` needs to join this run, or None when it can."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "needs the 'postgres' extra: pip install 'praxo-actors[postgres]'"
    if _postgres_dsn() is None:
        return "needs a PostgreSQL server: set PRAXO_POSTGRES_DSN or install its binaries"
    return None


def _backends() -> dict[str, Callable[[Clock], StoreBase]]:
    if _postgres_missing() is not None:
        return BACKENDS
    return {**BACKENDS, "PostgresStore": _postgres}


def notes() -> list[str]:
    """The backends this run left out, and what each needs."""
    missing = _postgres_missing()
    return [] if missing is None else [f"PostgresStore (every case): {missing}"]


def _item(item: Item, stamps: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"namespace": list(item.namespace), "key": item.key, "value": item.value}
    if stamps:
        out["created_ns"], out["updated_ns"] = item.created_ns, item.updated_ns
    return out


def _convert(op: str, result: Any) -> Any:
    if op == "get":
        return None if result is None else _item(result, stamps=True)
    if op == "search":
        return [_item(item, stamps=False) for item in result]
    if op == "list_namespaces":
        return [list(namespace) for namespace in result]
    return result


def _run(store: StoreBase, case: Case) -> None:
    for step in case.get("setup", []):
        args = {k: v for k, v in step.items() if k != "op"}
        getattr(store, step["op"])(**args)
    op = case["op"]
    expect_outcome(case, lambda: getattr(store, op)(**case["args"]), lambda r: _convert(op, r))


def run_case(case: Case) -> None:
    """Run ``case`` on each backend with a clock reading 1, 2, 3, …; raise on a mismatch."""
    for name, make in _backends().items():
        with make(itertools.count(1).__next__) as store:
            try:
                _run(store, case)
            except Exception as exc:  # name the backend that disagrees
                raise CaseFailure(f"{name}: {type(exc).__name__}: {exc}") from exc
            finally:
                schema = getattr(store, "schema", None)
                if schema is not None:
                    store._conn.execute(f'DROP SCHEMA "{schema}" CASCADE')  # type: ignore[attr-defined]
