"""Run the memory vectors against every store backend: both must give the same outcomes."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from conformance._runner import Case, CaseFailure, expect_outcome
from praxo_actors.memory import InMemoryStore, Item, SQLiteStore
from praxo_actors.memory._base import Clock, StoreBase

BACKENDS: dict[str, Callable[[Clock], StoreBase]] = {
    "InMemoryStore": lambda clock: InMemoryStore(clock=clock),
    "SQLiteStore": lambda clock: SQLiteStore(":memory:", clock=clock),
}


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
    for name, make in BACKENDS.items():
        with make(itertools.count(1).__next__) as store:
            try:
                _run(store, case)
            except Exception as exc:  # name the backend that disagrees
                raise CaseFailure(f"{name}: {type(exc).__name__}: {exc}") from exc
