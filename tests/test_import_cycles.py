"""No two modules of the packages import each other at run time, directly or through others.

The graph is read from the source: every ``import`` a module runs (at its top or inside a
function, a deferred import being a cycle put off, not removed), but not those under
``if TYPE_CHECKING:``, which never run. The folders in ``TYPED_ACYCLIC`` have no cycle even
counting those: a name two modules both need is in a third.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("praxo_actors", "supervisors")
# The folders with no import cycle even counting the imports under ``if TYPE_CHECKING:``.
TYPED_ACYCLIC = ("praxo_actors.agent", "praxo_actors.cluster")


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(path): path for p in PACKAGES for path in sorted((ROOT / p).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    """Collect the modules of ``MODULES`` that one module imports when it runs."""

    def __init__(self, module: str, package: str, type_checking: bool = False) -> None:
        self.module, self.package = module, package
        self.type_checking = type_checking
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test) and not self.type_checking:
            for statement in node.orelse:
                self.visit(statement)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(alias.name for alias in node.names if alias.name in MODULES)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            parts = self.package.split(".")
            parts = parts[: len(parts) - node.level + 1]
            base = ".".join([*parts, *([node.module] if node.module else [])])
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            if submodule in MODULES:
                self.found.add(submodule)
            elif base in MODULES:
                self.found.add(base)


def import_graph(type_checking: bool = False) -> dict[str, set[str]]:
    """Return, for each module, the modules it imports at run time (and, with
    ``type_checking``, under ``if TYPE_CHECKING:`` too)."""
    graph = {}
    for module, path in MODULES.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        visitor = _Imports(module, package, type_checking)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        graph[module] = visitor.found - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_sees_imports() -> None:
    """The graph holds the imports it must (a graph without edges has no cycles either)."""
    graph = import_graph()
    assert "praxo_actors._errors" in graph["praxo_actors.codes"]
    assert "praxo_actors.core._formats._registry" in graph["praxo_actors.core._toolcalls"]
    assert sum(len(edges) for edges in graph.values()) > 800
    assert "praxo_actors.agent._emit" not in graph["praxo_actors.agent._context"]
    assert "praxo_actors.agent._emit" in import_graph(True)["praxo_actors.agent._context"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    """Three modules importing each other in a ring are one cycle; a chain is none."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_at_run_time(package: str) -> None:
    """No module of the package takes part in an import cycle that runs."""
    assert [c for c in cycles(import_graph()) if c[0].startswith(package)] == []


@pytest.mark.parametrize("folder", TYPED_ACYCLIC)
def test_no_import_cycle_counting_type_checking_imports(folder: str) -> None:
    """No module of the folder takes part in a cycle, even through imports made for types."""
    found = [c for c in cycles(import_graph(True)) if any(m.startswith(folder) for m in c)]
    assert found == []
