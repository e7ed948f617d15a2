"""Compare the public API with ``api/<version>.txt``; ``--write`` regenerates the file.

Each line is ``module<TAB>name<TAB>kind<TAB>signature``. A public name is one listed in a public
module's ``__all__``; the check fails when code and inventory differ in any line.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

import praxo_actors

PUBLIC_MODULES = (
    "praxo_actors",
    "praxo_actors.models",
    "praxo_actors.core",
    "praxo_actors.agent",
    "praxo_actors.middleware",
    "praxo_actors.memory",
    "praxo_actors.testing",
    "praxo_actors.actors",
    "praxo_actors.runtime",
    "praxo_actors.providers",
    "praxo_actors.cluster",
    "praxo_actors.observer",
    "praxo_actors.cli",
    "supervisors",
)

INVENTORY = Path(__file__).parent / f"{praxo_actors.__version__}.txt"


def _kind(obj: Any) -> str:
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return "function"
    if callable(obj) and not isinstance(obj, type):
        return "callable"
    return "constant"


class _Stable:
    """A default value shown with a repr that does not depend on hash order."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _stable_default(value: Any) -> Any:
    if isinstance(value, frozenset | set):
        return _Stable(f"{type(value).__name__}({{{', '.join(sorted(map(repr, value)))}}})")
    return value


def _signature(obj: Any, kind: str) -> str:
    if kind in ("class", "exception", "function", "callable"):
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            return "(...)"
        params = [
            p.replace(default=_stable_default(p.default)) if p.default is not p.empty else p
            for p in sig.parameters.values()
        ]
        return str(sig.replace(parameters=params))
    if isinstance(obj, frozenset | set):
        return "{" + ", ".join(sorted(map(repr, obj))) + "}"
    if isinstance(obj, str | int | float | bool | tuple) or obj is None:
        return repr(obj)
    return type(obj).__name__


def _module_names() -> list[str]:
    present = []
    for name in PUBLIC_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        present.append(name)
    return present


def inventory() -> list[str]:
    """Return the inventory lines of the code as it is now."""
    lines = []
    for modname in _module_names():
        module = importlib.import_module(modname)
        for name in sorted(module.__all__):
            obj = getattr(module, name)
            kind = _kind(obj)
            lines.append(f"{modname}\t{name}\t{kind}\t{_signature(obj, kind)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Check (or with ``--write`` regenerate) the inventory; return the exit status."""
    args = sys.argv[1:] if argv is None else argv
    current = inventory()
    if "--write" in args:
        INVENTORY.write_text("\n".join(current) + "\n", encoding="utf-8")
        print(f"wrote {INVENTORY.name}: {len(current)} names")
        return 0
    recorded = INVENTORY.read_text(encoding="utf-8").splitlines() if INVENTORY.exists() else []
    if current == recorded:
        print(f"api: {len(current)} public names match {INVENTORY.name}")
        return 0
    print(f"api: the code differs from {INVENTORY.name} (run `python -m api.check --write`):")
    for line in difflib.unified_diff(recorded, current, "inventory", "code", lineterm="", n=0):
        print(line)
    return 1


if __name__ == "__main__":
    sys.exit(main())
