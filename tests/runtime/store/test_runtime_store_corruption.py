"""A runtime on a damaged SQLite file: refused at start, coded errors while running."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _damage import DAMAGE, damage_live, sound_file
from _helpers import captured_logs
from _runtime_helpers import TIMEOUT, echo_agent

from praxo_actors import PraxoError
from praxo_actors.runtime import Runtime

Start = Callable[..., Runtime]


def _code(call: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    with pytest.raises(PraxoError) as info:
        call(*args, **kwargs)
    return info.value.code


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_start_on_a_damaged_file_fails_store_corrupt(
    runtime: Start, tmp_path: Path, damage: str
) -> None:
    """``Runtime.start(store=path)`` on a damaged or foreign file fails ``STORE_CORRUPT`` and
    leaves no thread behind (the fixture checks); a sound file starts."""
    path = tmp_path / "m.sqlite3"
    DAMAGE[damage](path, sound_file(path))
    assert _code(runtime, store=path) == "STORE_CORRUPT"
    assert _code(runtime, store=str(path)) == "STORE_CORRUPT"
    sound = tmp_path / "sound.sqlite3"
    sound_file(sound)
    rt = runtime(store=sound, agents={"default": echo_agent})
    assert rt.session("s").run("hi").get(timeout=TIMEOUT).output == "hi"


def test_a_file_damaged_under_a_running_runtime_fails_runs_store_failed(
    runtime: Start, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Damaged in use: runs on live and new sessions, durable runs, reads of the store and of
    pending runs all fail with ``STORE_FAILED`` (never a sqlite3 error), each failed write
    logged with its code; the runtime stops cleanly and will not start on the file again
    (``STORE_CORRUPT``)."""
    path = tmp_path / "m.sqlite3"
    rt = runtime(store=path, agents={"default": echo_agent})
    rt.register_agent("durable", echo_agent, durable=True)
    live = rt.session("live")
    first = live.run("before")
    assert first.get(timeout=TIMEOUT).output == "before"
    assert rt.session("d", "durable").run("before").get(timeout=TIMEOUT).output == "before"
    damage_live(path)
    with captured_logs(caplog, "praxo_actors.runtime", logging.ERROR) as logged:
        assert _code(live.run("after").get, timeout=TIMEOUT) == "STORE_FAILED"
    failures = [e for e in logged if e["event"] == "session_log_write_failed"]
    assert [(e["code"], e["commits"]) for e in failures] == [("STORE_FAILED", 1)]
    assert "corrupt" in failures[0]["error"]
    assert _code(live.run("again").get, timeout=TIMEOUT) == "STORE_FAILED"
    assert _code(rt.session("new").run("x").get, timeout=TIMEOUT) == "STORE_FAILED"
    assert _code(rt.session("d", "durable").run("x").get, timeout=TIMEOUT) == "STORE_FAILED"
    assert _code(rt.resume_pending) == "STORE_FAILED"
    assert _code(rt.store.search, ("praxo",)) == "STORE_FAILED"
    assert _code(live.history) == "STORE_FAILED"
    assert _code(live.result, first.run_id) == "STORE_FAILED"
    rt.stop()
    assert _code(runtime, store=path) == "STORE_CORRUPT"


def test_a_store_path_that_cannot_be_opened_fails_store_failed(
    runtime: Start, tmp_path: Path
) -> None:
    """A path below a regular file, a directory, or a lock file that cannot be opened:
    ``STORE_FAILED`` from ``Runtime.start``, with no thread left behind."""
    (tmp_path / "plain").write_text("x")
    assert _code(runtime, store=tmp_path / "plain" / "m.sqlite3") == "STORE_FAILED"
    assert _code(runtime, store=tmp_path) == "STORE_FAILED"
    path = tmp_path / "m.sqlite3"
    Path(f"{path}.lock").mkdir()
    assert _code(runtime, store=path) == "STORE_FAILED"
