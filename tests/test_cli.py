"""The ``praxo-actors`` command: the demo, the conformance vectors and the benchmarks."""

from __future__ import annotations

import io
import queue
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
import structlog
from rich.console import Console

from praxo_actors import cli
from praxo_actors._demo import DemoConfig, DemoReport, run_demo
from praxo_actors._demo_view import DemoView

SCRIPT = Path(sys.executable).parent / "praxo-actors"
TIMEOUT = 60.0


def command() -> list[str]:
    """Return the installed console script, or the module form if it is not installed."""
    return [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "praxo_actors.cli"]


def summary(out: str) -> dict[str, str]:
    """Parse the plain summary's ``label: value`` lines."""
    lines = out.split("summary (", 1)[1].splitlines()[1:]
    pairs = (line.split(": ", 1) for line in lines if ": " in line)
    return {label.strip(): value.strip() for label, value in pairs}


def test_the_demo_runs_and_summarises(tmp_path: Path) -> None:
    """``praxo-actors demo`` on 50 sessions exits 0 and prints a consistent summary."""
    store = tmp_path / "demo.sqlite3"
    done = subprocess.run(
        [
            *command(),
            "demo",
            "--sessions",
            "50",
            "--runs-per-session",
            "2",
            "--latency",
            "0.01",
            "--no-live",
            "--store",
            str(store),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "summary (ok)" in done.stdout
    rows = summary(done.stdout)
    assert rows["sessions"] == "50"
    assert rows["runs"] == "100"
    assert int(rows["completed"]) + int(rows["failed"]) == 100
    assert float(rows["runs/s"]) > 0
    assert rows["latency p50"].endswith(" ms") and rows["latency p99"].endswith(" ms")
    # What the latency is made of: the model's time, and waiting behind the other runs.
    model_ms = float(rows["model time p50"].removesuffix(" ms"))
    assert 0 < model_ms < float(rows["latency p50"].removesuffix(" ms"))
    assert rows["waiting p50"].endswith(" ms")
    assert "latency: from submitting a run to its outcome" in done.stdout
    assert "50 sessions run at once (--concurrency), so each run waits" in done.stdout
    assert rows["failed SESSION_CRASHED"] == "1"
    assert rows["crashes"] == "1"
    assert rows["restored from checkpoint"] == "1/1"
    assert rows["histories consistent"] == "50/50"
    assert int(rows["events counted by subscriber"]) > 0
    assert rows["dropped"] == "0"
    assert store.exists()
    assert "child_crashed" in store.with_suffix(".log").read_text(encoding="utf-8")


def test_the_demo_counts_model_failures_by_code(
    tmp_path: Path, no_thread_leaks: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """With every model call failing, each run fails with a model code and the exit is 0."""
    logging_before = structlog.get_config()
    status = cli.main(
        [
            "demo",
            "--sessions",
            "20",
            "--runs-per-session",
            "1",
            "--latency",
            "0",
            "--failure-rate",
            "1",
            "--no-live",
            "--store",
            str(tmp_path / "d.sqlite3"),
        ]
    )
    assert status == 0
    rows = summary(capsys.readouterr().out)
    assert rows["completed"] == "0"
    codes = {k: int(v) for k, v in rows.items() if k.startswith("failed ")}
    assert sum(codes.values()) == 20
    assert set(codes) <= {"failed MODEL_UNAVAILABLE", "failed MODEL_RATE_LIMITED"}
    assert rows["crashes"] == "0"  # one run per session: nothing to restore, so no crash
    assert structlog.get_config() == logging_before


def test_the_live_display_renders_on_a_terminal(tmp_path: Path, no_thread_leaks: None) -> None:
    """On a terminal the demo shows a progress bar, live counters and a summary table."""
    out = io.StringIO()
    view = DemoView(Console(file=out, force_terminal=True, width=100), live=True)
    config = DemoConfig(sessions=10, runs_per_session=2, latency=0.0, store=str(tmp_path / "s"))
    report = run_demo(config, view)
    view.summary("summary", report.rows())
    text = out.getvalue()
    assert report.ok
    assert "live sessions" in text and "runs completed" in text
    assert "20/20" in text  # the progress bar's final count
    assert "histories consistent" in text


def test_a_plain_console_gets_periodic_lines(tmp_path: Path, no_thread_leaks: None) -> None:
    """Off a terminal the live view falls back to plain progress lines."""
    out = io.StringIO()
    view = DemoView(Console(file=out, width=100), live=True)
    assert view.live is False
    run_demo(DemoConfig(sessions=5, runs_per_session=1, store=str(tmp_path / "s")), view)
    assert "runs 5/5" in out.getvalue()


def test_a_report_is_ok_only_when_every_run_has_an_outcome() -> None:
    """A run without a code, or an inconsistent history, fails the report."""
    report = DemoReport(runs_total=2, completed=1, failed=Counter({"X": 1}), sessions=1)
    report.consistent_sessions = 1
    assert report.ok
    report.unexpected.append("s run 1: RuntimeError")
    assert not report.ok
    report.unexpected.clear()
    report.consistent_sessions = 0
    assert not report.ok
    assert DemoReport(runs_total=1, sessions=0).ok is False  # one run never ended


def test_latency_percentiles_use_the_nearest_rank() -> None:
    """p50 and p99 come from the sorted latencies."""
    report = DemoReport(runs_total=0, latencies=[float(i) for i in range(100, 0, -1)])
    assert report.percentile(0.5) == 51.0
    assert report.percentile(0.99) == 100.0
    assert DemoReport(runs_total=0).percentile(0.5) == 0.0


@pytest.mark.parametrize(
    "args",
    [
        ["demo", "--failure-rate", "2"],
        ["demo", "--sessions", "0"],
        ["demo", "--latency", "-1"],
        ["demo", "--unknown"],
        [],
    ],
)
def test_bad_arguments_exit_with_status_2(args: list[str]) -> None:
    """Out-of-range or unknown arguments are usage errors."""
    with pytest.raises(SystemExit) as exited:
        cli.main(args)
    assert exited.value.code == 2


def test_conformance_exit_status_reflects_the_vectors() -> None:
    """``praxo-actors conformance`` exits 0 when its groups pass and 1 when one is missing."""
    passing = subprocess.run(
        [*command(), "conformance", "json"], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert passing.stdout.splitlines()[-1].endswith("passed, 0 failed")
    failing = subprocess.run(
        [*command(), "conformance", "no_such_group"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert failing.returncode == 1
    assert "0 passed, 1 failed" in failing.stdout


@pytest.mark.parametrize("module", ["praxo_actors", "praxo_actors.cli"])
def test_the_module_form_runs_too(module: str) -> None:
    """``python -m praxo_actors`` (and ``python -m praxo_actors.cli``) is the same command."""
    done = subprocess.run(
        [sys.executable, "-m", module, "conformance", "json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].endswith("passed, 0 failed")


def test_the_package_module_names_itself_in_its_usage() -> None:
    """``python -m praxo_actors --help`` describes the command under the name it was run by."""
    done = subprocess.run(
        [sys.executable, "-m", "praxo_actors", "--help"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m praxo_actors ")
    assert "conformance" in done.stdout and "demo" in done.stdout


def test_conformance_without_a_checkout_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the conformance package, the command explains where it is and exits 2."""
    monkeypatch.setitem(sys.modules, "conformance", None)
    monkeypatch.setitem(sys.modules, "conformance._runner", None)
    monkeypatch.setattr(cli, "_checkout_with", lambda _relative: None)
    assert cli.main(["conformance"]) == 2
    assert "source repository" in capsys.readouterr().err


def test_the_demo_without_rich_names_the_cli_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without rich installed, ``demo`` says to install the ``cli`` extra and exits 2."""
    for name in [*(m for m in sys.modules if m.startswith("rich.")), "rich"]:
        monkeypatch.setitem(sys.modules, name, None)  # None: "import rich..." fails
    monkeypatch.delitem(sys.modules, "praxo_actors._demo_view", raising=False)
    assert cli.main(["demo", "--sessions", "1", "--no-live"]) == 2
    captured = capsys.readouterr()
    assert "pip install 'praxo-actors[cli]'" in captured.err
    assert "Traceback" not in captured.err and captured.out == ""


def test_bench_lists_the_scripts_of_the_checkout(capsys: pytest.CaptureFixture[str]) -> None:
    """``praxo-actors bench --list`` names the scripts in bench/."""
    assert cli.main(["bench", "--list"]) == 0
    listed = capsys.readouterr().out.split()
    expected = sorted(p.stem for p in (Path(cli.__file__).parents[1] / "bench").glob("[!_]*.py"))
    assert listed == expected


def test_bench_refuses_an_unknown_script(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown benchmark name is a usage error."""
    assert cli.main(["bench", "no_such_bench"]) == 2
    assert "no such script: no_such_bench" in capsys.readouterr().err


def test_bench_without_a_checkout_says_where_they_are(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Outside a checkout, ``bench`` points at the repository's bench/ folder and exits 2."""
    monkeypatch.setattr(cli, "_checkout_with", lambda _relative: None)
    assert cli.main(["bench"]) == 2
    assert "bench/" in capsys.readouterr().err


def test_bench_runs_a_script_and_reports_its_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each script runs with the extra arguments; a failing one makes the exit status 1."""
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "ok.py").write_text("import sys; print('args', sys.argv[1:])\n")
    (tmp_path / "bench" / "bad.py").write_text("raise SystemExit(3)\n")
    monkeypatch.setattr(cli, "_checkout_with", lambda _relative: tmp_path)
    assert cli.main(["bench", "ok", "--quick"]) == 0
    assert cli.main(["bench"]) == 1
    captured = capsys.readouterr()
    assert "== bench/ok.py --quick" in captured.out
    assert "failed: bad" in captured.out


def test_the_demo_serves_the_observer_and_prints_its_url(tmp_path: Path) -> None:
    """``demo --observe`` prints the observer's loopback URL, and the demo still passes."""
    done = subprocess.run(
        [
            *command(),
            "demo",
            "--sessions",
            "20",
            "--runs-per-session",
            "2",
            "--latency",
            "0.01",
            "--no-live",
            "--observe",
            "--store",
            str(tmp_path / "demo.sqlite3"),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    urls = [line for line in done.stdout.splitlines() if line.startswith("observer: ")]
    assert len(urls) == 1 and urls[0].startswith("observer: http://127.0.0.1:")
    assert int(urls[0].rsplit(":", 1)[1].rstrip("/")) > 0
    assert "summary (ok)" in done.stdout


def test_demo_observe_without_the_extra_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without Starlette, ``demo --observe`` says to install the ``observer`` extra, exit 2."""
    monkeypatch.setitem(sys.modules, "starlette", None)
    assert cli.main(["demo", "--sessions", "1", "--no-live", "--observe"]) == 2
    captured = capsys.readouterr()
    assert "pip install 'praxo-actors[observer]'" in captured.err and captured.out == ""


def test_a_bad_observer_port_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """``--observe-port`` outside 0..65535 exits 2 with argparse's message."""
    with pytest.raises(SystemExit) as info:
        cli.main(["demo", "--observe", "--observe-port", "70000"])
    assert info.value.code == 2
    assert "65535" in capsys.readouterr().err


def test_demo_observe_keep_serves_until_sigterm(tmp_path: Path) -> None:
    """``demo --observe --keep`` serves the page after the summary; SIGTERM ends it, exit 0."""
    import httpx

    child = subprocess.Popen(
        [
            *command(),
            "demo",
            "--sessions",
            "5",
            "--runs-per-session",
            "2",
            "--latency",
            "0.01",
            "--no-live",
            "--observe",
            "--keep",
            "--store",
            str(tmp_path / "demo.sqlite3"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        while not (seen and seen[-1].startswith("observer: still serving ")):
            line = lines.get(timeout=TIMEOUT)
            assert line is not None, f"exited before serving on: {seen}"
            seen.append(line)
        url = seen[-1].split()[3]
        state = httpx.get(f"{url}api/state", timeout=TIMEOUT)
        assert state.status_code == 200
        assert len(state.json()["sessions"]) == 5  # the demo's sessions, still there
        child.send_signal(signal.SIGTERM)
        assert child.wait(TIMEOUT) == 0
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(TIMEOUT)
        reader.join(TIMEOUT)
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()
        err = child.stderr.read()
        child.stderr.close()
    assert err == ""
    assert any("summary (ok)" in line for line in seen)
    assert lines.get(timeout=TIMEOUT) is None  # nothing printed after the signal
