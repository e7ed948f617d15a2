"""scripts/check_dist.py: what ``make dist`` and ``make dist-check`` verify in the built package."""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
VERSION = "9.9.9"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_dist", ROOT / "scripts" / "check_dist.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_dist"] = module
    spec.loader.exec_module(module)
    return module


check_dist = load()

METADATA = """Metadata-Version: 2.4
Name: praxo-actors
Version: 9.9.9
Requires-Dist: msgspec>=0.19
Requires-Dist: pykka<4.6,>=4.5
Requires-Dist: structlog>=24.1
Requires-Dist: rich>=13; extra == 'cli'
"""


def build(dist: Path, files: list[str], metadata: str = METADATA) -> None:
    """Write a wheel holding ``files`` (and its metadata) and an sdist into ``dist``."""
    dist.mkdir()
    with zipfile.ZipFile(dist / f"praxo_actors-{VERSION}-py3-none-any.whl", "w") as wheel:
        for name in files:
            wheel.writestr(name, "")
        wheel.writestr(f"praxo_actors-{VERSION}.dist-info/METADATA", metadata)
    (dist / f"praxo_actors-{VERSION}.tar.gz").write_bytes(b"")


GOOD = [*check_dist.REQUIRED_FILES, "praxo_actors/__init__.py", "supervisors/__init__.py"]


def test_a_wheel_with_the_packages_and_their_markers_passes(tmp_path: Path) -> None:
    build(tmp_path / "dist", GOOD)
    wheel, problems = check_dist.check_files(tmp_path / "dist", VERSION)
    assert problems == []
    assert wheel.name == f"praxo_actors-{VERSION}-py3-none-any.whl"


def test_a_wheel_without_py_typed_or_with_the_tests_fails(tmp_path: Path) -> None:
    files = [f for f in GOOD if f != "supervisors/py.typed"] + ["tests/test_x.py", "junk/a.py"]
    build(tmp_path / "dist", files)
    _, problems = check_dist.check_files(tmp_path / "dist", VERSION)
    assert problems == [
        "the wheel lacks supervisors/py.typed",
        "the wheel holds the checkout's tests/",
        "the wheel holds an unexpected top-level junk/",
        "the wheel holds an unexpected top-level tests/",
    ]


def test_a_missing_sdist_is_reported(tmp_path: Path) -> None:
    build(tmp_path / "dist", GOOD)
    (tmp_path / "dist" / f"praxo_actors-{VERSION}.tar.gz").unlink()
    _, problems = check_dist.check_files(tmp_path / "dist", VERSION)
    assert len(problems) == 1 and problems[0].startswith("expected one wheel and one sdist")


def test_a_dependency_the_readme_does_not_name_is_reported() -> None:
    assert check_dist.check_requirements(METADATA) == []
    extra = METADATA + "Requires-Dist: httpx>=0.27\n"
    assert check_dist.check_requirements(extra) == [
        "the README's install line does not name the dependency httpx"
    ]


def test_the_quick_start_is_the_readmes_python_blocks_under_its_heading() -> None:
    code = check_dist.quick_start((ROOT / "README.md").read_text(encoding="utf-8"))
    assert "from praxo_actors" in code
    text = "# T\n\n## Quick start\n\n```python\na = 1\n```\n\n```python\nb = a\n```\n\n## Next\n"
    assert check_dist.quick_start(text + "```python\nc = 3\n```\n") == "a = 1\n\n\nb = a\n"
    with pytest.raises(ValueError, match="no 'Quick start' section"):
        check_dist.quick_start("# T\n\n```python\nx = 1\n```\n")
