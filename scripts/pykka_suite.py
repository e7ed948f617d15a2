"""Run Pykka's own test suite against ``MNActor`` (and Pykka's ``ThreadingActor``, as a control).

Run ``python scripts/pykka_suite.py`` (``make pykka-suite``); arguments after ``--`` go to
pytest, e.g. ``-- -x -k future``. The script:

1. downloads the sdist of the installed Pykka version with pip into ``build/pykka-suite/``
   (reused when present; when the download fails it prints ``skipped: no network`` and exits 0);
2. unpacks a fresh copy of it there and adds a runtime named ``mn`` to the copy's
   ``tests/conftest.py`` (``MNActor``, ``MNFuture``, ``threading.Event``, ``time.sleep``) beside
   Pykka's own ``threading`` one, so every runtime-parametrised test runs against both
   (``--runtime mn`` keeps only the new one);
3. runs pytest on the copy with a config of its own (``-c``), so this repository's pytest
   settings are not picked up, with a timeout per test and one for the whole run.

Nothing in this repository is edited: the patch is applied to the unpacked copy only.
Exit status: pytest's, 0 when skipped, 2 when the sdist's conftest no longer has the shape
the patch expects.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "build" / "pykka-suite"
DOWNLOAD_TIMEOUT = 180.0
"""Seconds for pip to fetch the sdist (it also fetches Pykka's build backend to read metadata)."""
RUN_TIMEOUT = 900.0
"""Seconds for the whole suite; it takes about 2 s for both runtimes."""

# Inserted before the ``runtime`` fixture, which is parametrised over RUNTIMES.values().
ANCHOR = '\n\n@pytest.fixture(scope="session", params=RUNTIMES.values())'
PATCH = """

# Added by praxo-actors' scripts/pykka_suite.py: the same suite on praxo-actors' M:N actors.
from praxo_actors.actors import MNActor, MNFuture  # noqa: E402

RUNTIMES["mn"] = pytest.param(
    Runtime(
        name="mn",
        actor_class=MNActor,
        event_class=threading.Event,
        future_class=MNFuture,
        sleep_func=time.sleep,
    ),
    id="mn",
)
for _name in [name for name in RUNTIMES if name not in {selected!r}]:
    del RUNTIMES[_name]
"""
# Pykka's own settings (it has none in pyproject.toml), not this repository's: with
# `filterwarnings = error` the suite fails on both runtimes, because its `run_async` helper
# (tests/test_future.py) never closes the event loops it makes (ResourceWarning).
PYTEST_INI = """\
[pytest]
testpaths = tests
timeout = 60
addopts = -p no:cacheprovider -p no:praxo_actors
"""


def main(argv: list[str] | None = None) -> int:
    """Fetch, patch and run Pykka's suite; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument(
        "--runtime",
        choices=("all", "mn", "threading"),
        default="all",
        help="which runtimes to run the suite on (default: all)",
    )
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    args = parser.parse_args(argv)

    version = importlib.metadata.version("pykka")
    sdist = _download(version)
    if sdist is None:
        return 0
    suite = _unpack(sdist, version)
    selected = ("mn", "threading") if args.runtime == "all" else (args.runtime,)
    if not _patch_conftest(suite / "tests" / "conftest.py", selected):
        return 2
    (suite / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")

    command = [sys.executable, "-m", "pytest", "-c", "pytest.ini", "--rootdir", ".", "-q"]
    command += args.pytest_args
    print(f"pykka-suite: pykka {version} tests on runtimes: {args.runtime}", flush=True)
    try:
        done = subprocess.run(command, cwd=suite, timeout=RUN_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        print(f"pykka-suite: FAILED: the suite ran longer than {RUN_TIMEOUT:.0f} s", flush=True)
        return 1
    return done.returncode


def _download(version: str) -> Path | None:
    """Return the cached sdist of ``pykka==version``, downloading it first if need be."""
    CACHE.mkdir(parents=True, exist_ok=True)
    sdist = CACHE / f"pykka-{version}.tar.gz"
    if sdist.is_file():
        return sdist
    command = [
        *(sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"),
        *("--no-deps", "--no-binary", ":all:", f"pykka=={version}", "--dest", str(CACHE)),
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        reason = f"pip download took longer than {DOWNLOAD_TIMEOUT:.0f} s"
    else:
        lines = (done.stderr or done.stdout).strip().splitlines()
        reason = lines[-1] if lines else f"pip exited with {done.returncode}"
    if sdist.is_file():
        return sdist
    print(f"pykka-suite: skipped: no network (could not download pykka=={version}: {reason})")
    return None


def _unpack(sdist: Path, version: str) -> Path:
    """Unpack a fresh copy of the sdist into the cache and return its root folder."""
    suite = CACHE / f"pykka-{version}"
    shutil.rmtree(suite, ignore_errors=True)
    with tarfile.open(sdist) as archive:
        archive.extractall(CACHE, filter="data")
    return suite


def _patch_conftest(conftest: Path, selected: tuple[str, ...]) -> bool:
    """Add the ``mn`` runtime to the suite's conftest and keep only the ``selected`` runtimes.

    Returns False, changing nothing, when the conftest is not in the shape this patches.
    """
    text = conftest.read_text(encoding="utf-8")
    if text.count(ANCHOR) != 1 or "RUNTIMES = {" not in text:
        print(
            f"pykka-suite: FAILED: {conftest} has no `RUNTIMES` dict and `runtime` fixture "
            "in the shape this script patches; update scripts/pykka_suite.py",
            flush=True,
        )
        return False
    patch = PATCH.format(selected=sorted(selected))
    conftest.write_text(text.replace(ANCHOR, patch + ANCHOR), encoding="utf-8")
    return True


if __name__ == "__main__":
    sys.exit(main())
