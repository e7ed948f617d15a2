"""The ``praxo-actors`` command: the live demo, the conformance vectors, the benchmarks.

Run ``praxo-actors --help`` (or ``python -m praxo_actors --help``). Exit statuses: 0 on
success, 1 when the demo, a vector or a benchmark fails, 2 for a usage error or when the
conformance vectors or benchmarks are not available (they ship with the source repository,
not with the installed package), or when the demo's display library ``rich`` is not installed
(it comes with the ``cli`` extra: ``pip install 'praxo-actors[cli]'``).
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["build_parser", "main"]


def main(argv: Sequence[str] | None = None, prog: str = "praxo-actors") -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    ``prog`` is the command's name in its help and usage messages.
    """
    parser = build_parser(prog)
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "bench":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    command: Callable[[argparse.Namespace, list[str]], int] = args.run
    return command(args, extra)


def build_parser(prog: str = "praxo-actors") -> argparse.ArgumentParser:
    """Return the argument parser of the ``praxo-actors`` command."""
    parser = argparse.ArgumentParser(
        prog=prog, description="Host LLM agents inside Python services."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser(
        "demo",
        help="run thousands of agent sessions on the actor runtime, live",
        description="Run agent sessions with a scripted async model (simulated latency, tool "
        "calls, model failures and a few crashed sessions) on the SQLite store, and report "
        "throughput, latency and the runtime's counters. Exits 0 when every run completed or "
        "failed with a code and every session's history holds exactly its completed runs.",
    )
    demo.add_argument("--sessions", type=_positive_int, default=2000, help="default: 2000")
    demo.add_argument("--runs-per-session", type=_positive_int, default=3, help="default: 3")
    demo.add_argument(
        "--latency",
        type=_seconds,
        default=0.05,
        help="mean model latency in seconds, jittered by ±50%% (default: 0.05)",
    )
    demo.add_argument(
        "--failure-rate",
        type=_fraction,
        default=0.05,
        help="share of runs whose model fails with a ModelError (default: 0.05)",
    )
    demo.add_argument(
        "--store", default=".praxo/demo.sqlite3", help="SQLite file (default: .praxo/demo.sqlite3)"
    )
    demo.add_argument(
        "--concurrency", type=_positive_int, default=500, help="sessions driven at once (500)"
    )
    demo.add_argument(
        "--idle-timeout",
        type=_positive_float,
        default=1.0,
        help="seconds after which an idle session is passivated (default: 1.0)",
    )
    demo.add_argument(
        "--crashes",
        type=_nonnegative_int,
        default=None,
        help="sessions to crash mid-run (default: one per 400 sessions, at least one)",
    )
    demo.add_argument("--seed", type=int, default=None, help="seed for latency and failures")
    demo.add_argument("--no-live", action="store_true", help="plain progress lines")
    demo.add_argument(
        "--observe",
        action="store_true",
        help="serve the observer page beside the demo on 127.0.0.1 and print its URL "
        "(needs the 'observer' extra)",
    )
    demo.add_argument(
        "--observe-port",
        type=_port,
        default=0,
        help="the observer's port (default: 0, any free port)",
    )
    demo.add_argument(
        "--keep",
        action="store_true",
        help="with --observe: keep serving the observer after the demo, until Ctrl-C or SIGTERM",
    )
    demo.set_defaults(run=_run_demo)

    conformance = commands.add_parser(
        "conformance",
        help="run the conformance vectors (from a source checkout)",
        description="Run the conformance vector groups and print one line per group. What "
        "needs an optional extra or a service that is missing (PostgresStore: the 'postgres' "
        "extra and a server) is skipped with a SKIP line saying what it needs; the exit status "
        "is 0 when every case that ran passed.",
    )
    conformance.add_argument("groups", nargs="*", help="groups to run (default: all)")
    conformance.set_defaults(run=_run_conformance)

    bench = commands.add_parser(
        "bench",
        help="run the benchmark scripts in bench/ (from a source checkout)",
        description="Run the scripts in the checkout's bench/ folder one after another; "
        "arguments not recognised here are passed to each script (e.g. --quick).",
    )
    bench.add_argument("scripts", nargs="*", help="script names, e.g. agent_loop (default: all)")
    bench.add_argument("--list", action="store_true", help="list the scripts and exit")
    bench.set_defaults(run=_run_bench)
    return parser


# -- demo ----------------------------------------------------------------------------------


def _run_demo(args: argparse.Namespace, _extra: list[str]) -> int:
    # rich is the cli extra's, not the library's: import it here, and say how to get it.
    try:
        from rich.console import Console

        from praxo_actors._demo_view import DemoView
    except ModuleNotFoundError as exc:
        if exc.name != "rich" and not (exc.name or "").startswith("rich."):
            raise
        print(
            "praxo-actors demo: the demo's display needs the 'rich' package, which the 'cli' "
            "extra installs: pip install 'praxo-actors[cli]'",
            file=sys.stderr,
        )
        return 2
    if args.keep and not args.observe:
        print("praxo-actors demo: --keep needs --observe", file=sys.stderr)
        return 2
    if args.observe and not _observer_available():
        print(
            "praxo-actors demo --observe: the observer needs Starlette and uvicorn, which the "
            "'observer' extra installs: pip install 'praxo-actors[observer]'",
            file=sys.stderr,
        )
        return 2
    from praxo_actors._demo import DemoConfig, DemoReport, run_demo

    config = DemoConfig(
        sessions=args.sessions,
        runs_per_session=args.runs_per_session,
        latency=args.latency,
        failure_rate=args.failure_rate,
        store=args.store,
        live=not args.no_live,
        concurrency=args.concurrency,
        idle_timeout=args.idle_timeout,
        crashes=args.crashes,
        seed=args.seed,
        observe=args.observe,
        observe_port=args.observe_port,
        keep=args.keep,
    )
    view = DemoView(Console(), live=config.live)
    view.console.print(
        f"praxo-actors demo: {config.sessions} sessions x {config.runs_per_session} runs, "
        f"model latency ~{config.latency * 1000:.0f} ms, failure rate {config.failure_rate:.0%}, "
        f"store {config.store}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )

    def show(report: DemoReport) -> None:
        verdict = "ok" if report.ok else "FAILED"
        view.summary(f"summary ({verdict})", report.rows())
        for note in report.notes():
            view.console.print(note, markup=False, highlight=False, soft_wrap=True)
        for problem in report.unexpected[:10]:
            view.console.print(f"  {problem}", markup=False, highlight=False, soft_wrap=True)

    report = run_demo(config, view, show)
    return 0 if report.ok else 1


def _observer_available() -> bool:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


# -- conformance and benchmarks ------------------------------------------------------------


def _run_conformance(args: argparse.Namespace, _extra: list[str]) -> int:
    try:
        runner = importlib.import_module("conformance._runner")
    except ModuleNotFoundError:
        root = _checkout_with("conformance/_runner.py")
        if root is None:
            print(
                "praxo-actors conformance: the conformance vectors are not installed with the "
                "package; run this from a checkout of the source repository (it has a "
                "conformance/ folder at its root).",
                file=sys.stderr,
            )
            return 2
        sys.path.insert(0, str(root))
        runner = importlib.import_module("conformance._runner")
    status: int = runner.main(list(args.groups))
    return status


def _run_bench(args: argparse.Namespace, extra: list[str]) -> int:
    root = _checkout_with("bench")
    scripts = (
        sorted(p for p in (root / "bench").glob("*.py") if not p.name.startswith("_"))
        if root is not None
        else []
    )
    if not scripts:
        print(
            "praxo-actors bench: the benchmarks are not installed with the package; they are "
            "the scripts in the bench/ folder of the source repository (run "
            "`python bench/<name>.py` there, or this command from inside the checkout).",
            file=sys.stderr,
        )
        return 2
    if args.list:
        for script in scripts:
            print(script.stem)
        return 0
    by_name = {p.stem: p for p in scripts}
    unknown = [name for name in args.scripts if name.removesuffix(".py") not in by_name]
    if unknown:
        print(f"praxo-actors bench: no such script: {', '.join(unknown)}", file=sys.stderr)
        print(f"available: {', '.join(by_name)}", file=sys.stderr)
        return 2
    chosen = [by_name[n.removesuffix(".py")] for n in args.scripts] or scripts
    failed = []
    for script in chosen:
        print(f"== bench/{script.name} {' '.join(extra)}".rstrip(), flush=True)
        done = subprocess.run([sys.executable, str(script), *extra], cwd=root, check=False)
        if done.returncode != 0:
            failed.append(script.stem)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


def _checkout_with(relative: str) -> Path | None:
    """Return the source checkout that holds ``relative``, or None.

    The working directory and its parents come first, then the checkout this package was
    installed from in editable mode.
    """
    cwd = Path.cwd().resolve()
    for root in (cwd, *cwd.parents, Path(__file__).resolve().parents[1]):
        if (root / relative).exists() and (root / "pyproject.toml").is_file():
            return root
    return None


# -- argument types ------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _nonnegative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be from 0 to 65535, got {value}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError(f"must be from 0 to 60 seconds, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {value}")
    return value


if __name__ == "__main__":
    sys.exit(main())
