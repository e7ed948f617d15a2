"""The quickstart example runs and shows every step it promises."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import pytest

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"


def test_quickstart_runs_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    """Running the quickstart as __main__ prints each step and the closing line."""
    runpy.run_path(str(QUICKSTART), run_name="__main__")
    out = capsys.readouterr().out
    assert "parsed echo" in out
    assert "'received 1 messages', then 'received 3 messages'" in out
    assert '{"name": "sum", "value": 5}' in out
    assert "AGENT_TOOL_NOT_SELECTED" in out
    assert "[REDACTED_EMAIL]" in out
    assert out.rstrip().endswith("quickstart: all examples passed")


def test_quickstart_runs_as_a_script() -> None:
    """``python examples/quickstart.py`` exits 0."""
    done = subprocess.run(
        [sys.executable, str(QUICKSTART)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "quickstart: all examples passed" in done.stdout
