"""``praxo-actors conformance`` with the base install: what needs an extra is skipped, named."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120.0

# Makes `import psycopg` fail as it does where the `postgres` extra is not installed.
BLOCKER = """
import importlib.abc
import sys


class _Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "psycopg" or name.startswith("psycopg."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Missing())
"""


def test_conformance_without_the_postgres_extra_skips_postgres_and_passes(
    tmp_path: Path,
) -> None:
    """Without psycopg the memory group runs on the other stores, says what it skipped, exits 0."""
    (tmp_path / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), *sys.path])}
    env.pop("PRAXO_POSTGRES_DSN", None)
    done = subprocess.run(
        [sys.executable, "-m", "praxo_actors", "conformance", "memory", "json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    memory = next(line for line in lines if line.startswith("memory "))
    assert memory.split()[1:] == [memory.split()[1], "passed,", "0", "failed"]
    assert int(memory.split()[1]) > 0
    assert (
        "  SKIP PostgresStore (every case): needs the 'postgres' extra: "
        "pip install 'praxo-actors[postgres]'"
    ) in lines
    assert lines[-1].endswith("0 failed (not everything ran: see SKIP above)")
    assert "FAIL" not in done.stdout


def test_a_skipped_case_is_noted_and_does_not_fail_the_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A case raising ``CaseSkipped`` is listed with its reason; the exit status stays 0."""
    monkeypatch.syspath_prepend(str(ROOT))
    from conformance import _runner

    def run_case(case: dict[str, str]) -> None:
        if case["name"] == "needs-extra":
            raise _runner.CaseSkipped("needs the 'x' extra")

    group = types.ModuleType("conformance.groups.fake")
    group.run_case = run_case  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "conformance.groups.fake", group)
    monkeypatch.setattr(
        _runner, "load_group", lambda _name: [{"name": "a"}, {"name": "needs-extra"}]
    )
    monkeypatch.setattr(_runner, "VECTORS", ROOT / "conformance" / "vectors")
    assert _runner.run_group("fake") == (1, [], ["needs-extra: needs the 'x' extra"])
