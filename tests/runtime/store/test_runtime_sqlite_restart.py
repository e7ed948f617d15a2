"""Restart: a runtime on a SQLite file sees the history another process committed to it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from _runtime_helpers import TIMEOUT, contents, echo_agent

from praxo_actors.agent import new_agent_options
from praxo_actors.models import Request
from praxo_actors.runtime import Runtime
from praxo_actors.testing import FunctionModel

Start = Callable[..., Runtime]

# Runs in a child process: two sessions, two committed runs each and one failed run, then the
# process exits, cleanly ("stop") or at once without stopping anything ("exit").
CHILD = """
import json, os, sys
from praxo_actors import PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.models import ModelError
from praxo_actors.runtime import Runtime
from praxo_actors.testing import FunctionModel

def answer(request):
    text = request.messages[-1].content
    return ModelError("REFUSED") if text.endswith("fail") else text.upper()

path, how = sys.argv[1], sys.argv[2]
rt = Runtime.start(path, idle_timeout=None)
rt.register_agent("default", lambda: new_agent_options(FunctionModel(answer)))
outcomes = []
for sid in ("a", "b"):
    for text in ("one", "fail", "two"):
        try:
            outcomes.append(rt.session(sid).run(f"{sid}-{text}").get(timeout=10).output)
        except PraxoError as exc:
            outcomes.append(exc.code)
print("RESULT " + json.dumps(outcomes), flush=True)
if how == "exit":
    os._exit(0)
rt.stop()
"""


def _run_child(path: Path, how: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), how],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    outcomes: list[str] = json.loads(line.removeprefix("RESULT "))
    return outcomes


@pytest.mark.parametrize("how", ["stop", "exit"])
def test_second_runtime_sees_the_committed_history(
    runtime: Start, tmp_path: Path, how: str
) -> None:
    """After the first process stops (or just exits), a new runtime restores every session."""
    path = tmp_path / "sessions.sqlite3"
    outcomes = _run_child(path, how)
    assert outcomes == ["A-ONE", "REFUSED", "A-TWO", "B-ONE", "REFUSED", "B-TWO"]
    model = FunctionModel(lambda r: f"seen {len(r.messages)}")
    rt = runtime(agents={"default": lambda: new_agent_options(model)}, store=path)
    assert contents(rt.session("a").history()) == ["a-one", "A-ONE", "a-two", "A-TWO"]
    assert contents(rt.session("b").history()) == ["b-one", "B-ONE", "b-two", "B-TWO"]
    assert rt.session("a").run("three").get(timeout=TIMEOUT).output == "seen 5"
    request: Request = model.requests[0]
    assert contents(request.messages) == ["a-one", "A-ONE", "a-two", "A-TWO", "three"]


def test_restart_in_process_on_the_same_file(runtime: Start, tmp_path: Path) -> None:
    """Stopping a runtime and starting another on its file keeps every committed message."""
    path = tmp_path / "nested" / "sessions.sqlite3"
    first = runtime(agents={"default": echo_agent}, store=path)
    for n in range(3):
        first.session(f"s{n}").run(f"m{n}").get(timeout=TIMEOUT)
    first.stop()
    second = runtime(agents={"default": echo_agent}, store=path)
    for n in range(3):
        assert contents(second.session(f"s{n}").history()) == [f"m{n}", f"m{n}"]
    assert second.session("s0").run("again").get(timeout=TIMEOUT).output == "again"
    assert len(second.session("s0").history()) == 4
