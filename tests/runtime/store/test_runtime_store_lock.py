"""One store, one runtime: a second runtime on a held store fails at start with STORE_LOCKED."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import assert_no_new_threads
from _runtime_helpers import TIMEOUT, echo_agent

from praxo_actors import PraxoError
from praxo_actors.memory import InMemoryStore
from praxo_actors.runtime import Runtime

Start = Callable[..., Runtime]


def _code(start: Callable[[], object]) -> str:
    with pytest.raises(PraxoError) as info:
        start()
    return info.value.code


def test_a_second_runtime_on_a_held_sqlite_file_is_refused(runtime: Start, tmp_path: Path) -> None:
    """While a runtime holds a SQLite file another start fails; after its stop one succeeds."""
    path = tmp_path / "s.sqlite3"
    first = runtime(agents={"default": echo_agent}, store=path)
    before = set(threading.enumerate())
    assert _code(lambda: Runtime.start(path, idle_timeout=None)) == "STORE_LOCKED"
    assert_no_new_threads(before, TIMEOUT)  # the refused start left no thread behind
    first.session("s").run("kept").get(timeout=TIMEOUT)
    first.stop()
    second = runtime(agents={"default": echo_agent}, store=path)
    assert [m.content for m in second.session("s").history()] == ["kept", "kept"]


def test_one_store_object_serves_one_runtime_at_a_time(runtime: Start) -> None:
    """The same InMemoryStore given to two live runtimes is refused the second time."""
    store = InMemoryStore()
    first = runtime(store=store)
    assert _code(lambda: Runtime.start(store, idle_timeout=None)) == "STORE_LOCKED"
    first.stop()
    runtime(store=store)  # free again


HOLDER = textwrap.dedent(
    """
    import sys, threading
    from praxo_actors.runtime import Runtime
    runtime = Runtime.start(sys.argv[1])
    print("held", flush=True)
    threading.Event().wait(120)
    """
)


def test_a_runtime_in_another_process_holds_the_file_until_it_dies(
    runtime: Start, tmp_path: Path
) -> None:
    """A file held by another process is refused; once that process is killed it is free."""
    path = tmp_path / "s.sqlite3"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        assert _code(lambda: Runtime.start(path, idle_timeout=None)) == "STORE_LOCKED"
    finally:
        holder.kill()  # SIGKILL: no stop(), no atexit; the kernel drops the lock
        holder.communicate(timeout=TIMEOUT)
    rt = runtime(agents={"default": echo_agent}, store=path)
    assert rt.session("s").run("mine now").get(timeout=TIMEOUT).output == "mine now"
