"""Every code is a constant in ``praxo_actors.codes``, raised as its one class, and documented."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import supervisors
from praxo_actors import _errors, codes
from praxo_actors.codes import CODES, RUNTIME_STOPPED
from supervisors import _errors as supervisor_errors

ROOT = Path(__file__).resolve().parents[1]
FAMILY = {
    cls
    for cls in vars(_errors).values()
    if isinstance(cls, type) and cls.__module__ == _errors.__name__
}
"""The error classes of ``praxo_actors._errors``: a code names one of them exactly."""
CODE_LIKE = re.compile(r"\A[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\Z")


def _modules(package: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


class Site:
    """One call that passes a code: where it is, what it calls, the code and how it is written."""

    def __init__(self, where: str, callee: Any, code: str, literal: bool) -> None:
        self.where, self.callee, self.code, self.literal = where, callee, code, literal

    def __repr__(self) -> str:
        return f"{self.where}: {getattr(self.callee, '__name__', self.callee)}({self.code})"


def _code_argument(callee: Any, call: ast.Call) -> ast.expr | None:
    """Return the argument ``call`` passes as the parameter ``code`` of ``callee``, if any."""
    for keyword in call.keywords:
        if keyword.arg == "code":
            return keyword.value
    try:
        parameters = list(inspect.signature(callee).parameters)
    except (TypeError, ValueError):
        return None
    if "code" not in parameters:
        return None
    index = parameters.index("code")
    return call.args[index] if index < len(call.args) else None


def _sites(package: str) -> Iterator[Site]:
    """Yield every call in ``package`` to a class or function whose parameter ``code`` is given."""
    for name, path in _modules(package):
        try:
            module: ModuleType = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # an optional extra that is not installed
            if (exc.name or "").partition(".")[0] in {"praxo_actors", "supervisors"}:
                raise
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            callee = getattr(module, node.func.id, None)
            if callee is None or not callable(callee):
                continue
            argument = _code_argument(callee, node)
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                yield Site(where, callee, argument.value, literal=True)
            elif isinstance(argument, ast.Name):
                value = getattr(module, argument.id, None)
                if isinstance(value, str) and CODE_LIKE.match(value):
                    yield Site(where, callee, value, literal=False)


SITES = list(_sites("praxo_actors"))
SUPERVISOR_SITES = list(_sites("supervisors"))


def test_the_scan_finds_the_raise_sites() -> None:
    """The scan sees the calls that pass codes, through constants (a broken scan checks nothing)."""
    assert len(SITES) > 300
    assert any(site.callee is _errors.AgentError and site.code == RUNTIME_STOPPED for site in SITES)
    assert len(SUPERVISOR_SITES) > 20


@pytest.mark.parametrize("package", ["praxo_actors", "supervisors"])
def test_raise_sites_name_codes_by_their_constants(package: str) -> None:
    """No call passes a code as an inline string: it names the constant."""
    sites = SITES if package == "praxo_actors" else SUPERVISOR_SITES
    assert [site for site in sites if site.literal] == []


def test_every_code_passed_is_in_the_table() -> None:
    """Every code any call passes is a key of ``praxo_actors.codes.CODES``.

    (A ``SupervisorError`` the runtime makes carries a code of ``supervisors.CODES``.)
    """
    unknown = [
        site
        for site in SITES
        if site.code not in CODES
        and not (site.callee is supervisors.SupervisorError and site.code in supervisors.CODES)
    ]
    assert unknown == []


def test_every_code_is_raised_as_its_class() -> None:
    """An exception is made with a code only as the code's class (or a subclass adding fields).

    A class of ``praxo_actors._errors`` must be the code's class itself: a plain ``PraxoError``
    for a code the table gives to ``AgentError`` is the kind of split the table forbids.
    """
    wrong = []
    for site in SITES:
        callee, entry = site.callee, CODES.get(site.code)
        if not (isinstance(callee, type) and issubclass(callee, BaseException)) or entry is None:
            continue
        if callee is supervisors.SupervisorError:
            continue
        carried = entry.error is not None and issubclass(callee, entry.error)
        if not carried or (callee in FAMILY and callee is not entry.error):
            wrong.append(site)
    assert wrong == []


def test_the_supervisors_codes_are_its_table() -> None:
    """``supervisors`` raises only the codes of ``supervisors.CODES``, all as SupervisorError."""
    constants = {
        value
        for name, value in vars(supervisor_errors).items()
        if name.isupper() and isinstance(value, str)
    }
    assert constants == set(supervisors.CODES)
    for site in SUPERVISOR_SITES:
        assert site.code in supervisors.CODES, site
        if isinstance(site.callee, type):
            assert issubclass(site.callee, supervisors.SupervisorError), site


def test_each_constant_is_its_own_name() -> None:
    """``codes.X == "X"`` for every code, and ``__all__`` lists every one."""
    for name, entry in CODES.items():
        assert getattr(codes, name) == name == entry.name
    assert set(codes.__all__) == {*CODES, "CODES", "Code"}


def test_other_modules_constants_agree_with_the_table() -> None:
    """A module constant holding a code (``MODEL_AUTH``, ``TOOL_RETRY``, …) holds a known one."""
    prefixes = {name.split("_")[0] + "_" for name in CODES} - {"TOOL_"}
    unknown = []
    for name, path in _modules("praxo_actors"):
        if name == codes.__name__:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if (
                isinstance(value, ast.Constant)
                and isinstance(value.value, str)
                and CODE_LIKE.match(value.value)
                and value.value.startswith(tuple(prefixes))
                and value.value not in CODES
            ):
                unknown.append(f"{path.relative_to(ROOT)}:{node.lineno}: {value.value}")
    assert unknown == []


def test_a_stopped_runtimes_bus_refuses_as_agent_error() -> None:
    """``RUNTIME_STOPPED`` is an AgentError also where it was a plain PraxoError before."""
    from praxo_actors.runtime._events._router import EventRouter

    router = EventRouter()
    router.close()
    with pytest.raises(_errors.AgentError) as raised:
        router.subscribe(lambda event: None, "*")
    assert raised.value.code == RUNTIME_STOPPED


# -- the docs ---------------------------------------------------------------------------------

_ROW = re.compile(r"^\|\s*`([A-Z0-9_*]+)`\s*\|\s*(`(\w+)`|—)\s*\|\s*(.*?)\s*\|$")


def _code_pages() -> list[Path]:
    """The docs pages whose title is "Error codes" (found wherever the docs are filed)."""
    return [
        path
        for path in sorted((ROOT / "docs").glob("**/*.md"))
        if path.read_text(encoding="utf-8").startswith("# Error codes\n")
    ]


def _table_rows(text: str, section: str) -> dict[str, tuple[str | None, str]]:
    """Return the ``| code | class | meaning |`` rows under the heading ``## section``."""
    rows: dict[str, tuple[str | None, str]] = {}
    inside = False
    for line in text.splitlines():
        if line.startswith("## "):
            inside = line == f"## {section}"
        elif inside and (match := _ROW.match(line)):
            rows[match.group(1)] = (match.group(3), match.group(4))
    return rows


def test_the_docs_have_one_codes_page() -> None:
    """Exactly one docs page is titled "Error codes"."""
    assert len(_code_pages()) == 1


def test_the_docs_table_is_the_codes_table() -> None:
    """The docs' table lists every code of ``praxo_actors.codes`` with its class and meaning."""
    text = _code_pages()[0].read_text(encoding="utf-8")
    documented = _table_rows(text, "praxo_actors")
    expected = {
        entry.name: (entry.error.__name__ if entry.error else None, entry.meaning)
        for entry in CODES.values()
    }
    assert documented == expected


def test_the_docs_table_of_supervisors_is_its_table() -> None:
    """The docs' second table lists every code of ``supervisors.CODES``."""
    text = _code_pages()[0].read_text(encoding="utf-8")
    documented = _table_rows(text, "supervisors")
    assert documented == {code: ("SupervisorError", m) for code, m in supervisors.CODES.items()}


def _doc_table_codes() -> Iterator[tuple[str, str]]:
    """Yield (page, code) for each code in the ``code`` column of any table in the docs."""
    for path in sorted((ROOT / "docs").glob("**/*.md")):
        column: int | None = None
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("|"):
                column = None
                continue
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if column is None:
                column = cells.index("code") if "code" in cells else -1
            elif column >= 0 and column < len(cells):
                for code in re.findall(r"`([A-Z][A-Z0-9_]*\*?)`", cells[column]):
                    yield path.name, code


def test_every_code_in_a_docs_table_exists() -> None:
    """Every code in a ``code`` column of any docs table is a known code (``X_*`` a family)."""
    known = {*CODES, *supervisors.CODES}
    unknown = [
        (page, code)
        for page, code in _doc_table_codes()
        if not (
            any(k.startswith(code[:-1]) for k in known) if code.endswith("*") else code in known
        )
    ]
    assert unknown == []
    assert len(list(_doc_table_codes())) > 50
