"""Pykka's private names appear in one module only: ``supervisors/_pykka_compat.py``.

The names are read from the installed Pykka itself (its private modules, the private methods and
attributes of its actor, ref and future classes, the private names of ``pykka.messages``), so a
new private hook that Pykka adds, and the code here starts to use, is caught too. Docstrings may
mention them; code, string constants and keywords may not.
"""

from __future__ import annotations

import ast
import inspect
import pkgutil
import re
import textwrap
from pathlib import Path

import pykka
import pykka.messages
import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPAT = ROOT / "supervisors" / "_pykka_compat.py"
EXEMPT = {COMPAT, Path(__file__).resolve()}
"""The compatibility module, and this check (whose own test of itself spells the names)."""
SCANNED = ("praxo_actors", "supervisors", "tests", "bench", "scripts", "conformance", "examples")
NOT_PYKKAS = {"_abc_impl", "_is_protocol"}
"""Private names Pykka's classes get from ``abc`` and ``typing``, not from Pykka."""
WORDS_ELSEWHERE = {"_stop"}
"""Names common enough in code of its own (``self._stop = threading.Event()``) that only a call
(``x._stop()``), a definition, a keyword or a string constant counts as Pykka's."""


def _instance_attributes(cls: type) -> set[str]:
    """Return the private attributes ``cls.__init__`` sets on ``self``."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__)))
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and node.attr.startswith("_")
    }


def pykka_private_names() -> set[str]:
    """Return the private names of the installed Pykka that code could reach."""
    names: set[str] = set()
    classes = (pykka.Actor, pykka.ThreadingActor, pykka.ActorRef, pykka.Future, pykka.ActorRegistry)
    for cls in classes:
        names |= {n for n in vars(cls) if n.startswith("_") and not n.startswith("__")}
    for cls in (pykka.Actor, pykka.ActorRef, pykka.Future):
        names |= _instance_attributes(cls)
    names |= {n for n in vars(pykka.messages) if n.startswith("_") and not n.startswith("__")}
    return names - NOT_PYKKAS


def pykka_private_modules() -> set[str]:
    """Return the dotted names of Pykka's private modules."""
    found = pkgutil.iter_modules(pykka.__path__)
    return {f"pykka.{m.name}" for m in found if m.name.startswith("_")}


def _docstrings(tree: ast.AST) -> set[int]:
    """Return the ids of the string nodes that are docstrings (of modules, classes, functions)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            # An attribute docstring (a string statement after an assignment) counts too.
            for i, stmt in enumerate(body):
                is_doc = i == 0 or isinstance(body[i - 1], ast.Assign | ast.AnnAssign)
                if is_doc and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    found.add(id(stmt.value))
    return found


def uses(source: str, names: set[str], modules: set[str]) -> list[str]:
    """Return ``line: what`` for each use of a Pykka private name in ``source``."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    words = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, sorted(names))) + r")(?![\w])")
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            private = [a.name for a in node.names if _private_module(a.name, modules)]
            found += [f"{line}: import {name}" for name in private]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if _private_module(node.module, modules):
                found.append(f"{line}: from {node.module}")
            elif node.module.split(".")[0] == "pykka":
                found += [f"{line}: {a.name}" for a in node.names if a.name in names]
        elif isinstance(node, ast.Attribute) and node.attr in names:
            if node.attr not in WORDS_ELSEWHERE or id(node) in called:
                found.append(f"{line}: .{node.attr}")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in names:
            found.append(f"{line}: def {node.name}")
        elif isinstance(node, ast.keyword) and node.arg in names:
            found.append(f"{line}: {node.arg}=")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            found += [f"{line}: {m!r} in a string" for m in words.findall(node.value)]
    return sorted(found)


def _private_module(name: str, modules: set[str]) -> bool:
    return any(name == m or name.startswith(m + ".") for m in modules)


def sources() -> list[Path]:
    """Return every Python file of the repository that is not the compatibility module."""
    files = [p for top in SCANNED for p in sorted((ROOT / top).rglob("*.py"))]
    return [p for p in files if p.resolve() not in EXEMPT]


def test_pykka_has_private_names_to_look_for() -> None:
    """The names read from Pykka include the hooks this repository builds on."""
    names = pykka_private_names()
    assert len(names) >= 10
    assert pykka_private_modules() >= {"pykka._actor", "pykka._envelope", "pykka._future"}
    from supervisors import _pykka_compat

    assert set(_pykka_compat.HOOKS) <= names


def test_the_check_finds_each_kind_of_use() -> None:
    """A call, a definition, a keyword, a string and a private import are each found."""
    names, modules = pykka_private_names(), pykka_private_modules()
    source = textwrap.dedent(
        '''
        """A docstring may name _handle_failure."""
        from pykka._envelope import Envelope
        from pykka.messages import _ActorStop
        class Kind:
            def _create_future(self): ...
        actor._stop()
        actor._actor_loop_running()
        vars(actor).update(_handle_failure=None)
        getattr(actor, "_handle_receive")
        self._stop = threading.Event()
        self._stop.set()
        '''
    )
    found = [entry.split(": ", 1)[1] for entry in uses(source, names, modules)]
    assert sorted(found) == sorted(
        [
            "from pykka._envelope",
            "_ActorStop",
            "def _create_future",
            "._stop",
            "._actor_loop_running",
            "_handle_failure=",
            "'_handle_receive' in a string",
        ]
    )


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_but_the_compatibility_module_uses_pykka_internals(path: Path) -> None:
    """The module uses no Pykka private name: it goes through ``supervisors._pykka_compat``."""
    names, modules = pykka_private_names(), pykka_private_modules()
    assert uses(path.read_text(encoding="utf-8"), names, modules) == []
