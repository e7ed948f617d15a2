"""The ``protocols`` extra: its SDKs are imported when an app is built, never on import."""

from __future__ import annotations

import importlib.util

__all__ = ["require"]


def require(*modules: str) -> None:
    """Raise ``ModuleNotFoundError`` naming the extra if one of ``modules`` is missing."""
    for name in modules:
        if importlib.util.find_spec(name) is None:
            raise ModuleNotFoundError(
                f"praxo_actors.protocols needs {name}: pip install 'praxo-actors[protocols]'",
                name=name,
            )
