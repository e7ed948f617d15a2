"""Load vector groups, run every case, and report one line per group."""

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


def run_group(name: str) -> tuple[int, list[str]]:
    """Run one group; return (passed, failure descriptions)."""
    module = importlib.import_module(f"conformance.groups.{name}")
    passed, failures = 0, []
    for case in load_group(name):
        try:
            module.run_case(case)
        except Exception as exc:  # a failing case must not stop the others
            failures.append(f"{case.get('name', '?')}: {type(exc).__name__}: {exc}")
        else:
            passed += 1
    return passed, failures


def main(argv: list[str] | None = None) -> int:
    """Run the groups named in ``argv`` (default: all present) and print a summary."""
    names = list(argv if argv is not None else sys.argv[1:]) or list(GROUPS)
    total_passed = total_failed = 0
    for name in names:
        if not (VECTORS / f"{name}.json").exists():
            print(f"{name:<12} missing: no vectors/{name}.json")
            total_failed += 1
            continue
        passed, failures = run_group(name)
        total_passed += passed
        total_failed += len(failures)
        print(f"{name:<12} {passed} passed, {len(failures)} failed")
        for failure in failures:
            print(f"  FAIL {failure}")
    print(f"{total_passed} passed, {total_failed} failed")
    return 1 if total_failed else 0
