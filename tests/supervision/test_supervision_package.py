"""The package's boundaries: no import of praxo_actors, and every error code documented."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import supervisors
from supervisors import _errors

PACKAGE = Path(supervisors.__file__).parent
DOCS = PACKAGE.parent / "docs" / "how-to" / "supervision.md"


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_supervisors_imports_nothing_from_praxo_actors() -> None:
    """No module of the package imports praxo_actors."""
    offenders = [
        path.name
        for path in sorted(PACKAGE.glob("*.py"))
        if any(name.split(".")[0] == "praxo_actors" for name in _imported_modules(path))
    ]
    assert offenders == []


def test_every_error_code_is_documented() -> None:
    """Each code the package defines appears in the supervision docs, and no other does."""
    defined = {
        value
        for name, value in vars(_errors).items()
        if name.isupper() and isinstance(value, str) and value.startswith("SUPERVISOR_")
    }
    documented = set(re.findall(r"SUPERVISOR_[A-Z_]+", DOCS.read_text(encoding="utf-8")))
    assert len(defined) == 10
    assert documented == defined


def test_public_names_are_exported() -> None:
    """The flat namespace lists the supervision API in __all__."""
    expected = {
        "ChildSpec",
        "CrashOnAskError",
        "Down",
        "DynamicSupervisor",
        "ManualClock",
        "Monitor",
        "Registry",
        "Supervisor",
        "SupervisorError",
        "monitor",
    }
    assert expected <= set(supervisors.__all__)
    assert all(hasattr(supervisors, name) for name in supervisors.__all__)
