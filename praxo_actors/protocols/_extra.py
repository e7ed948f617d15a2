"""The ``protocols`` extra: its SDKs are imported when an app is built, never on import."""

from __future__ import annotations

import importlib.util
from typing import Any

from praxo_actors.protocols._runtimes import check

__all__ = ["check_runtime", "require"]


def check_runtime(runtime: Any) -> None:
    """Refuse anything but a ``Runtime`` or a ``ClusterRuntime``.

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT``.
    """
    check(runtime)


def require(*modules: str) -> None:
    """Raise ``ModuleNotFoundError`` naming the extra if one of ``modules`` is missing."""
    for name in modules:
        if importlib.util.find_spec(name) is None:
            raise ModuleNotFoundError(
                f"praxo_actors.protocols needs {name}: pip install 'praxo-actors[protocols]'",
                name=name,
            )
