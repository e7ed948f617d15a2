"""Load vector groups, run every case, and report one line per group.

A group runs with the base install alone. What needs an optional extra or a service (such as
``PostgresStore``, with the ``postgres`` extra and a PostgreSQL server) is skipped when it is
missing, with a note saying what it needs: a case raises :class:`CaseSkipped`, and a group's
``notes()`` (when it has one) names what it left out of its cases. Skips do not fail the run.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from praxo_actors import PraxoError

VECTORS = Path(__file__).parent / "vectors"

GROUPS = (
    "json",
    "tool_calls",
    "tool_call_formats",
    "schema",
    "paths",
    "pii",
    "checkpoint",
    "compaction",
    "memory",
    "agent_loop",
    "middleware",
    "supervision",
)

Case = dict[str, Any]


class CaseFailure(AssertionError):
    """A case whose outcome differs from its vector."""


class CaseSkipped(Exception):
    """A case that cannot run here; the message says which extra or service it needs."""


def expect_outcome(
    case: Case, thunk: Callable[[], Any], convert: Callable[[Any], Any] = lambda v: v
) -> Any:
    """Run ``thunk`` and compare it with the case's ``expect`` value or ``error`` code.

    Returns the raw result so a group can make further checks.
    """
    try:
        result = thunk()
    except PraxoError as exc:
        if "error" not in case:
            raise CaseFailure(f"unexpected error {exc.code}: {exc}") from exc
        if exc.code != case["error"]:
            raise CaseFailure(f"expected error {case['error']}, got {exc.code}") from exc
        return None
    if "error" in case:
        raise CaseFailure(f"expected error {case['error']}, got {result!r}")
    if "expect" in case:
        got = convert(result)
        if not same_json(got, case["expect"]):
            raise CaseFailure(f"expected {case['expect']!r}, got {got!r}")
    return result


def same_json(a: Any, b: Any) -> bool:
    """Compare JSON values structurally, telling ``1`` from ``1.0`` and ``True`` from ``1``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def load_group(name: str) -> list[Case]:
    """Return the cases of one vector group."""
    doc = json.loads((VECTORS / f"{name}.json").read_text(encoding="utf-8"))
    if doc.get("group") != name or not isinstance(doc.get("cases"), list):
        raise ValueError(f"{name}.json: expected {{'group': {name!r}, 'cases': [...]}}")
    return list(doc["cases"])


def run_group(name: str) -> tuple[int, list[str], list[str]]:
    """Run one group; return (passed, failure descriptions, skip notes)."""
    module = importlib.import_module(f"conformance.groups.{name}")
    passed, failures, skipped = 0, [], []
    for case in load_group(name):
        try:
            module.run_case(case)
        except CaseSkipped as exc:
            skipped.append(f"{case.get('name', '?')}: {exc}")
        except Exception as exc:  # a failing case must not stop the others
            failures.append(f"{case.get('name', '?')}: {type(exc).__name__}: {exc}")
        else:
            passed += 1
    notes: list[str] = list(getattr(module, "notes", list)())
    return passed, failures, [*notes, *skipped]


def main(argv: list[str] | None = None) -> int:
    """Run the groups named in ``argv`` (default: all present) and print a summary.

    Returns 1 when a case failed or a group is missing, else 0 (skipped cases included).
    """
    names = list(argv if argv is not None else sys.argv[1:]) or list(GROUPS)
    total_passed = total_failed = total_notes = 0
    for name in names:
        if not (VECTORS / f"{name}.json").exists():
            print(f"{name:<12} missing: no vectors/{name}.json")
            total_failed += 1
            continue
        passed, failures, notes = run_group(name)
        total_passed += passed
        total_failed += len(failures)
        total_notes += len(notes)
        print(f"{name:<12} {passed} passed, {len(failures)} failed")
        for failure in failures:
            print(f"  FAIL {failure}")
        for note in notes:
            print(f"  SKIP {note}")
    skips = " (not everything ran: see SKIP above)" if total_notes else ""
    print(f"{total_passed} passed, {total_failed} failed{skips}")
    return 1 if total_failed else 0
