"""Check the built distributions in ``dist/`` (``make dist``), and the wheel in a fresh venv.

Run ``python scripts/check_dist.py [DIST]`` after ``python -m build``; ``--fresh-venv`` also
installs the wheel into a new virtual environment (its dependencies from the package index, as
``pip install praxo-actors`` would) and runs the README's quick start there, away from the
checkout (``make dist-check``, which CI runs after ``make test``). The checks:

1. ``DIST`` holds one wheel and one sdist of this version;
2. the wheel has ``py.typed`` for both packages and ``praxo_actors/__main__.py``, and none of the
   checkout's own folders (``tests``, ``conformance``, ``bench``, ``examples``, ...);
3. the README has a ``pip install praxo-actors`` line, and when its comment says what the package
   "depends on", that names every required dependency (without extras) of the wheel;
4. with ``--fresh-venv``: the package imports from the new venv, ``praxo-actors --help`` and
   ``python -m praxo_actors --help`` run, and the Python blocks of the README's "Quick start"
   section run in order, as one program, with the venv's interpreter.

Exit status 0 when every check passes, 1 otherwise (the failures are printed).
"""

from __future__ import annotations

import argparse
import email.parser
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PACKAGES = ("praxo_actors", "supervisors")
REQUIRED_FILES = ("praxo_actors/py.typed", "supervisors/py.typed", "praxo_actors/__main__.py")
CHECKOUT_ONLY = ("tests", "conformance", "bench", "examples", "scripts", "api", "docs")
TIMEOUT = 600.0


def quick_start(readme: str) -> str:
    """Return the Python blocks of the README's "Quick start" section, joined in order.

    Raises:
        ValueError: There is no such section, or it has no Python block.
    """
    heading = re.search(r"^(#+)\s*Quick ?start\s*$", readme, re.M | re.I)
    if heading is None:
        raise ValueError("README.md has no 'Quick start' section")
    level = len(heading.group(1))
    rest = readme[heading.end() :]
    end = re.search(rf"^#{{1,{level}}}\s", rest, re.M)
    section = rest[: end.start()] if end else rest
    blocks = re.findall(r"^```python\n(.*?)^```", section, re.M | re.S)
    if not blocks:
        raise ValueError("README.md's 'Quick start' section has no ```python block")
    return "\n\n".join(blocks)


def check_files(dist: Path, version: str) -> tuple[Path | None, list[str]]:
    """Check the wheel and the sdist in ``dist``; return the wheel and the problems found."""
    problems: list[str] = []
    wheels = sorted(dist.glob(f"praxo_actors-{version}-*.whl"))
    sdists = sorted(dist.glob(f"praxo_actors-{version}.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        found = sorted(p.name for p in dist.iterdir()) if dist.is_dir() else []
        problems.append(f"expected one wheel and one sdist of {version} in {dist}, found {found}")
    if not wheels:
        return None, problems
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
        metadata_name = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        metadata = wheel.read(metadata_name).decode() if metadata_name else ""
    problems += [f"the wheel lacks {name}" for name in REQUIRED_FILES if name not in names]
    tops = {name.split("/", 1)[0] for name in names if "/" in name}
    problems += [f"the wheel holds the checkout's {top}/" for top in CHECKOUT_ONLY if top in tops]
    stray = tops - set(PACKAGES) - {n.split("/", 1)[0] for n in names if ".dist-info/" in n}
    problems += [f"the wheel holds an unexpected top-level {top}/" for top in sorted(stray)]
    problems += check_requirements(metadata)
    return wheels[0], problems


def check_requirements(metadata: str) -> list[str]:
    """Check the wheel's required dependencies against the README's install line."""
    message = email.parser.Parser().parsestr(metadata)
    required = {
        re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower()
        for requirement in message.get_all("Requires-Dist") or []
        if "extra ==" not in requirement
    }
    line = next(
        (
            line
            for line in README.read_text(encoding="utf-8").splitlines()
            if line.startswith("pip install praxo-actors ")
        ),
        None,
    )
    if line is None:
        return ["README.md has no `pip install praxo-actors` line"]
    if "depends on" not in line:  # the line names no dependencies: nothing more to check
        return []
    named = {word.strip(",;.").lower() for word in line.split("depends on", 1)[1].split()}
    missing = sorted(required - named)
    return [f"the README's install line does not name the dependency {m}" for m in missing]


def check_in_fresh_venv(wheel: Path) -> list[str]:
    """Install ``wheel`` into a new venv and run the README's quick start with it."""
    code = quick_start(README.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="praxo-dist-") as tmp:
        work = Path(tmp)
        venv = work / "venv"
        bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
        python = bin_dir / "python"
        # No PYTHONPATH and a working directory outside the checkout: only the wheel is seen.
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        steps: list[tuple[str, list[str]]] = [
            ("create a venv", [sys.executable, "-m", "venv", str(venv)]),
            ("install the wheel", [str(python), "-m", "pip", "install", "-q", str(wheel)]),
            (
                "import it from the venv",
                [
                    str(python),
                    "-c",
                    "import praxo_actors, supervisors; where = praxo_actors.__file__; "
                    f"assert where.startswith({str(venv)!r}), where",
                ],
            ),
            ("praxo-actors --help", [str(bin_dir / "praxo-actors"), "--help"]),
            ("python -m praxo_actors --help", [str(python), "-m", "praxo_actors", "--help"]),
        ]
        (work / "quick_start.py").write_text(code, encoding="utf-8")
        steps.append(("the README's quick start", [str(python), "quick_start.py"]))
        for what, command in steps:
            print(f"dist: {what}", flush=True)
            done = subprocess.run(
                command, cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT
            )
            if done.returncode != 0:
                return [f"{what} failed ({done.returncode}):\n{done.stdout}{done.stderr}"]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", nargs="?", default=str(ROOT / "dist"), help="default: dist/")
    parser.add_argument(
        "--fresh-venv",
        action="store_true",
        help="install the wheel in a new venv and run the README's quick start there",
    )
    args = parser.parse_args(argv)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]
    wheel, problems = check_files(Path(args.dist).resolve(), version)
    if wheel is not None and not problems and args.fresh_venv:
        problems += check_in_fresh_venv(wheel)
    for problem in problems:
        print(f"dist: {problem}", file=sys.stderr)
    if not problems:
        print(f"dist: ok ({wheel.name if wheel else ''})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
