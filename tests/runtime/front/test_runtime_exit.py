"""A process that forgets ``stop()`` exits, stopping its runtime on the way out."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

TIMEOUT = 60.0

SCRIPT = textwrap.dedent(
    """
    import logging, sys
    from praxo_actors.agent import new_agent_options
    from praxo_actors.runtime import Runtime
    from praxo_actors.testing import EchoModel

    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    runtime = Runtime.start(sys.argv[1])
    runtime.register_agent("default", lambda: new_agent_options(EchoModel()))
    print(runtime.session("s").run("kept").get(timeout=10).output, flush=True)
    # no runtime.stop(): the interpreter must still exit, and the run must be on disk
    """
)


def test_a_script_without_stop_exits_and_keeps_its_runs(tmp_path: Path) -> None:
    """The script exits 0 on its own, its atexit hook stops the runtime, the run is stored."""
    store = tmp_path / "s.sqlite3"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(store)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "kept\n"
    assert "runtime_stopped" in done.stderr
    check = textwrap.dedent(
        """
        import sys
        from praxo_actors.memory import SQLiteStore
        from praxo_actors.runtime import read_session
        print([m.content for m in read_session(SQLiteStore(sys.argv[1]), "s").messages])
        """
    )
    stored = subprocess.run(
        [sys.executable, "-c", check, str(store)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    assert stored.stdout == "['kept', 'kept']\n"


CTRL_C = textwrap.dedent(
    """
    import logging, sys, threading
    from praxo_actors.agent import new_agent_options
    from praxo_actors.models import Response, message_assistant
    from praxo_actors.runtime import Runtime

    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    entered = threading.Event()

    def slow(request):
        entered.set()
        threading.Event().wait(120)  # a model that hangs
        return Response(message_assistant("late"))

    runtime = Runtime.start(timeout=2.0)
    runtime.register_agent("default", lambda: new_agent_options(slow))
    future = runtime.session("s").run("x")
    entered.wait(30)
    print("ready", flush=True)
    future.get(timeout=120)
    """
)


def test_the_first_ctrl_c_ends_a_script_waiting_on_a_run() -> None:
    """SIGINT while the main thread waits on a run ends the process at once, runtime stopped."""
    import signal

    child = subprocess.Popen(
        [sys.executable, "-c", CTRL_C],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=TIMEOUT)
    assert child.returncode != 0
    assert "KeyboardInterrupt" in stderr
    assert "runtime_stopped" in stderr
