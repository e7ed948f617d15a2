"""Compare the public API with ``api/<version>.txt``; ``--write`` regenerates the file.

Each line is ``module<TAB>name<TAB>kind<TAB>signature``. A public name is one listed in a public
module's ``__all__``; a public class is followed by its public methods, class methods, static
methods and properties (``Class.member``), those it inherits from this project's classes included.
A class whose instances users only receive (a runtime, a handle, a future) shows no constructor.
The check fails when code and inventory differ in any line.
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
    "praxo_actors.codes",
    "praxo_actors.agent",
    "praxo_actors.middleware",
    "praxo_actors.memory",
    "praxo_actors.testing",
    "praxo_actors.actors",
    "praxo_actors.runtime",
    "praxo_actors.providers",
    "praxo_actors.cluster",
    "praxo_actors.observer",
    "praxo_actors.serving",
    "praxo_actors.mcp",
    "praxo_actors.protocols",
    "praxo_actors.cli",
    "supervisors",
)

INVENTORY = Path(__file__).parent / f"{praxo_actors.__version__}.txt"

# Classes users get from a factory or a call, never by calling the class: their constructors are
# internal and may change without notice, so the inventory does not show them.
INTERNAL_CONSTRUCTORS = frozenset(
    {
        "praxo_actors.Runtime",
        "praxo_actors.runtime.Runtime",
        "praxo_actors.runtime.SessionHandle",
        "praxo_actors.runtime.Events",
        "praxo_actors.runtime.EventStream",
        "praxo_actors.runtime.Subscription",
        "praxo_actors.runtime.RunFuture",
        "praxo_actors.runtime.RunStream",  # made by SessionHandle.astream
        "praxo_actors.cluster.ClusterRuntime",
        "praxo_actors.cluster.ClusterSession",
        "praxo_actors.cluster.ClusterRunFuture",
        "praxo_actors.agent.AgentRun",
        "praxo_actors.agent.ModelContext",
        "praxo_actors.agent.ToolContext",
        "praxo_actors.mcp.MCPTools",  # made by MCPTools.stdio / MCPTools.http
    }
)
OWN_PACKAGES = ("praxo_actors", "supervisors")

# Public modules that need an extra: without its package installed they are left out.
EXTRA_PACKAGES = {"praxo_actors.mcp": "mcp"}


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


def _own(cls: type) -> bool:
    return cls.__module__.split(".")[0] in OWN_PACKAGES


def _member_kind(raw: Any) -> str | None:
    if isinstance(raw, property):
        return "property"
    if isinstance(raw, classmethod):
        return "classmethod"
    if isinstance(raw, staticmethod):
        return "staticmethod"
    if inspect.iscoroutinefunction(raw) or inspect.isasyncgenfunction(raw):
        return "async method"
    if inspect.isfunction(raw):
        return "method"
    return None


def _members(cls: type) -> list[tuple[str, str, str]]:
    """Return ``(name, kind, signature)`` for each public member ``cls`` defines or inherits."""
    seen: dict[str, tuple[str, str]] = {}
    for klass in reversed([k for k in cls.__mro__ if _own(k)]):
        for name, raw in vars(klass).items():
            kind = _member_kind(raw)
            if name.startswith("_") or kind is None:
                continue
            if kind == "property":
                target = raw.fget
                sig = _signature(target, "function") if target is not None else "(...)"
                sig = "-> " + sig.split("-> ", 1)[1] if "-> " in sig else ""
            else:
                sig = _signature(getattr(cls, name), "function")
            seen[name] = (kind, sig)
    return [(name, kind, sig) for name, (kind, sig) in sorted(seen.items())]


def _module_names() -> list[str]:
    present = []
    for name in PUBLIC_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name not in (name, EXTRA_PACKAGES.get(name)):
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
            if f"{modname}.{name}" in INTERNAL_CONSTRUCTORS:
                lines.append(f"{modname}\t{name}\t{kind}\t(no public constructor)")
            else:
                lines.append(f"{modname}\t{name}\t{kind}\t{_signature(obj, kind)}")
            if kind in ("class", "exception") and _own(obj):
                for member, member_kind, sig in _members(obj):
                    lines.append(f"{modname}\t{name}.{member}\t{member_kind}\t{sig}")
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
