"""The executor's names still import from ``praxo_actors.runtime``, as in 0.1 and 0.2."""

from __future__ import annotations

from pathlib import Path

import pytest

import praxo_actors
from praxo_actors import actors, runtime

API = Path(__file__).resolve().parents[2] / "api"
EXECUTOR_NAMES = (
    "MNActor",
    "MNFuture",
    "Scheduler",
    "SchedulerClosedError",
    "SchedulerStatistics",
    "blocking",
    "default_scheduler",
)
"""The executor's names that ``praxo_actors.runtime`` exported before the executor moved."""


def runtime_names_in(inventory: str) -> set[str]:
    """Return the names an API inventory lists under ``praxo_actors.runtime``."""
    lines = (API / inventory).read_text(encoding="utf-8").splitlines()
    return {line.split("\t")[1] for line in lines if line.startswith("praxo_actors.runtime\t")}


@pytest.mark.parametrize("inventory", ["0.1.0.txt", "0.2.0.dev0.txt"])
def test_every_executor_name_the_runtime_exported_is_still_exported(inventory: str) -> None:
    """Each executor name a released inventory lists under the runtime is still there."""
    listed = runtime_names_in(inventory) & set(actors.__all__)
    assert listed == set(EXECUTOR_NAMES)
    assert listed <= set(runtime.__all__)


@pytest.mark.parametrize("name", EXECUTOR_NAMES)
def test_the_old_import_path_gives_the_same_object(name: str) -> None:
    """``from praxo_actors.runtime import X`` is ``praxo_actors.actors.X`` itself."""
    namespace: dict[str, object] = {}
    exec(f"from praxo_actors.runtime import {name}", namespace)
    assert namespace[name] is getattr(actors, name)
    assert getattr(runtime, name) is getattr(actors, name)


def test_the_top_level_scheduler_error_is_the_executors() -> None:
    """``praxo_actors.SchedulerClosedError`` is the class the executor raises."""
    assert praxo_actors.SchedulerClosedError is actors.SchedulerClosedError
    assert issubclass(actors.SchedulerClosedError, praxo_actors.PraxoError)
