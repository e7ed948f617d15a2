"""The README's Python examples run, in order, as one program."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _helpers import python_blocks

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_has_python_examples() -> None:
    """The README holds several Python blocks, the runtime one among them."""
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    assert any("Runtime.start" in code for _, code in blocks)


def test_the_readme_examples_run_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_thread_leaks: None
) -> None:
    """Each Python block runs after the ones above it, in one namespace, without an error."""
    monkeypatch.chdir(tmp_path)  # the runtime example writes .praxo/ under the working directory
    namespace: dict[str, Any] = {"__name__": "readme"}
    for line, code in python_blocks(README.read_text(encoding="utf-8")):
        # Padding keeps README line numbers in tracebacks.
        exec(compile("\n" * (line - 1) + code, str(README), "exec"), namespace)
    assert (tmp_path / ".praxo" / "sessions.sqlite3").is_file()
