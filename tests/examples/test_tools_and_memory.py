"""The tools-and-memory example runs, is refused what its policy denies, and remembers."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tools_and_memory.py"


def test_the_example_runs_as_a_script(capsys: pytest.CaptureFixture[str]) -> None:
    """Run as ``__main__``, the example passes its own checks and prints the transcript."""
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    assert "PATH_DENIED" in out
    assert "PATH_OUTSIDE_ROOTS" in out
    assert "memory: ('projects', 'demo') deploy = {'when': 'Friday 10:00'}" in out
    assert "(5 steps, 5 tool calls)" in out


def test_the_run_keeps_the_secret_out_of_the_session(tmp_path: Path) -> None:
    """The denied file's content never reaches the conversation."""
    example = runpy.run_path(str(EXAMPLE))
    result = example["run"](tmp_path)
    assert all("API_KEY" not in str(m.content) for m in result.session.messages)
    assert result.output.startswith("We deploy on Friday")
