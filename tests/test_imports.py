"""Importing the pure layers loads neither the runtime nor its dependencies."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import praxo_actors
from praxo_actors import memory

HEAVY = (
    "pykka",
    "rich",
    "sqlite3",
    "asyncio",
    "praxo_actors.actors",
    "praxo_actors.runtime",
    "supervisors",
)
"""Modules a user of the pure layers should not pay for."""

TIMEOUT = 60.0


def loaded_after(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter; return the ``HEAVY`` modules it left loaded."""
    script = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout)
    return sorted(loaded)


@pytest.mark.parametrize(
    "module",
    [
        "praxo_actors",
        "praxo_actors.core",
        "praxo_actors.models",
        "praxo_actors.agent",
        "praxo_actors.middleware",
        "praxo_actors.memory",
        "praxo_actors.testing",
        "praxo_actors.cli",
    ],
)
def test_a_pure_module_imports_no_runtime(module: str) -> None:
    """Importing a module outside the runtime loads no Pykka, asyncio, sqlite3, rich or runtime."""
    assert loaded_after(f"import {module}") == []


def test_the_runtime_is_imported_on_first_use() -> None:
    """``praxo_actors.Runtime`` imports the runtime when it is first looked up."""
    assert loaded_after("import praxo_actors") == []
    loaded = loaded_after("import praxo_actors\npraxo_actors.Runtime")
    assert {"asyncio", "pykka", "praxo_actors.runtime"} <= set(loaded)


def test_sqlite3_is_imported_with_the_sqlite_store() -> None:
    """``praxo_actors.memory.SQLiteStore`` imports sqlite3 when it is first looked up."""
    assert loaded_after("from praxo_actors.memory import SQLiteStore") == ["sqlite3"]


def test_top_level_names_import_as_before() -> None:
    """``from praxo_actors import Runtime, PraxoError`` gives the runtime's class and the root."""
    from praxo_actors import PraxoError, Runtime
    from praxo_actors.runtime import Runtime as RuntimeClass

    assert Runtime is RuntimeClass
    assert praxo_actors.Runtime is RuntimeClass
    assert issubclass(praxo_actors.SessionBusyError, PraxoError)


def test_dir_lists_every_public_name() -> None:
    """``dir()`` of a package with lazy names lists each of its ``__all__``."""
    assert set(praxo_actors.__all__) <= set(dir(praxo_actors))
    assert set(memory.__all__) <= set(dir(memory))


def test_an_unknown_name_is_an_attribute_error() -> None:
    """Looking up a name the package does not define raises ``AttributeError``."""
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = praxo_actors.no_such_name  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = memory.no_such_name  # type: ignore[attr-defined]
    with pytest.raises(ImportError):
        from praxo_actors import no_such_name  # type: ignore[attr-defined]  # noqa: F401


def modules_after(code: str, names: tuple[str, ...]) -> list[str]:
    """Run ``code`` in a fresh interpreter; return which of ``names`` it left loaded."""
    script = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {names!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def test_the_providers_import_their_sdks_on_first_use() -> None:
    """``import praxo_actors.providers`` loads no SDK; a factory call loads its own only."""
    sdks = ("openai", "anthropic", "httpx2", "httpx")
    assert modules_after("import praxo_actors.providers", sdks) == []
    made = "from praxo_actors.providers import openai_model\nopenai_model('m', api_key='k')"
    assert modules_after(made, ("openai", "anthropic")) == ["openai"]


@pytest.mark.parametrize("module", ["praxo_actors", "praxo_actors.core", "praxo_actors.agent"])
def test_the_core_layers_never_import_the_providers(module: str) -> None:
    """The Core and the agent loop do not depend on the providers package."""
    assert modules_after(f"import {module}", ("praxo_actors.providers",)) == []


def test_runs_without_a_provider_never_import_opentelemetry() -> None:
    """A direct run and a hosted run with no provider set load no OpenTelemetry module."""
    code = (
        "from praxo_actors.agent import new_agent_options, run_agent\n"
        "from praxo_actors.models import session\n"
        "from praxo_actors.runtime import Runtime\n"
        "from praxo_actors.testing import EchoModel\n"
        "run_agent(new_agent_options(EchoModel()), session('s'), 'hi')\n"
        "with Runtime.start() as rt:\n"
        "    rt.register_agent('default', lambda: new_agent_options(EchoModel()))\n"
        "    rt.session('s').run('hi').get(timeout=10)\n"
    )
    assert modules_after(code, ("opentelemetry", "opentelemetry.trace")) == []


def test_a_provider_loads_opentelemetry_on_first_use() -> None:
    """Importing the agent loop loads no OpenTelemetry; options with a provider do."""
    assert modules_after("import praxo_actors.agent", ("opentelemetry",)) == []
    code = (
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from praxo_actors.agent import new_agent_options, run_agent\n"
        "from praxo_actors.models import session\n"
        "from praxo_actors.testing import EchoModel\n"
        "options = new_agent_options(EchoModel(), tracer_provider=TracerProvider())\n"
        "run_agent(options, session('s'), 'hi')\n"
    )
    assert modules_after(code, ("praxo_actors.agent._tracing",)) == ["praxo_actors.agent._tracing"]


EXECUTOR = Path(__file__).resolve().parents[1] / "praxo_actors" / "actors"
ABOVE_THE_EXECUTOR = (
    "praxo_actors.runtime",
    "praxo_actors.agent",
    "praxo_actors.models",
    "praxo_actors.memory",
    "praxo_actors.core",
    "praxo_actors.cluster",
    "praxo_actors.observer",
)
"""The layers the M:N executor must not know (it is generic, like ``supervisors``)."""


def test_the_executor_loads_no_layer_above_it() -> None:
    """``import praxo_actors.actors`` loads none of the runtime, agent, models or memory."""
    assert modules_after("import praxo_actors.actors", ABOVE_THE_EXECUTOR) == []


@pytest.mark.parametrize("path", sorted(EXECUTOR.glob("*.py")), ids=lambda p: p.name)
def test_no_executor_module_imports_a_layer_above_it(path: Path) -> None:
    """No module of the executor imports the layers above it, not even for type checking."""
    imported = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.append(node.module)
    above = [m for m in imported if _within(m, ABOVE_THE_EXECUTOR)]
    assert above == []


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)
