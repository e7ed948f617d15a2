"""The README's Python examples run, in order, as one program."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """Return each ```python block of ``text`` with the line number its code starts on."""
    return [
        (text.count("\n", 0, match.start(1)) + 1, match.group(1)) for match in BLOCK.finditer(text)
    ]


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
