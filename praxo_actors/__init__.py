"""praxo-actors: host LLM agents inside Python services."""

from __future__ import annotations

from praxo_actors._errors import PraxoError

__all__ = ["PraxoError", "__version__"]

__version__ = "0.1.0"
