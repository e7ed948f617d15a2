"""``import praxo_actors.protocols`` needs none of the ``protocols`` extra's packages."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from praxo_actors import PraxoError
from praxo_actors.protocols import ag_ui_app, openai_app

TIMEOUT = 60.0
EXTRA = ("starlette", "uvicorn", "ag_ui", "a2a", "mcp", "openai", "pydantic")


def test_importing_the_package_loads_no_sdk() -> None:
    """The SDKs are imported when an app is built, not with the package."""
    script = (
        "import sys, json, praxo_actors.protocols as p\n"
        f"print(json.dumps([m for m in {EXTRA!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_a_missing_sdk_names_the_extra() -> None:
    """Building an app without its SDK raises ModuleNotFoundError naming the extra."""
    script = (
        "import sys\n"
        "sys.modules['ag_ui'] = None\n"  # as if not installed
        "import importlib.util\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda n, *a: None if n == 'ag_ui' else real(n, *a)\n"
        "from praxo_actors.protocols import ag_ui_app\n"
        "try:\n"
        "    ag_ui_app(None)\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name, str(exc))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ag_ui ") and "praxo-actors[protocols]" in done.stdout


def test_an_app_serves_only_a_runtime() -> None:
    """Anything but a Runtime is RUNTIME_INVALID_INPUT when the app is built."""
    for build in (ag_ui_app, openai_app):
        with pytest.raises(PraxoError) as refused:
            build(object())  # type: ignore[arg-type]
        assert refused.value.code == "RUNTIME_INVALID_INPUT"
