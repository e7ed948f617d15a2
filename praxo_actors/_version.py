"""The package's version, in a module of its own so that its parts can name it without
importing the package (and all it imports)."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.2.0.dev0"
