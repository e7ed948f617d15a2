"""Calling the model a wrapper wraps: sync or ``async``, a ``fallback_model`` chain included."""

from __future__ import annotations

import inspect
import math
from typing import Any

from praxo_actors.agent import FallbackModel, Model
from praxo_actors.models import ModelError, Request, Response

__all__ = ["acall", "call", "check_model", "check_seconds", "is_async"]


def _leaves(model: Model) -> tuple[Model, ...]:
    return model.attempts if isinstance(model, FallbackModel) else (model,)


def is_async(model: Model) -> bool:
    """Return whether ``model`` (any leaf of a ``fallback_model``) is ``async def``.

    The runtime asks the same of a callback: an ``async`` one runs on its loop, a sync one on
    its thread pool.
    """
    return any(
        inspect.iscoroutinefunction(leaf)
        or inspect.iscoroutinefunction(getattr(leaf, "__call__", None))  # noqa: B004
        for leaf in _leaves(model)
    )


def check_model(factory: str, model: object) -> None:
    """Raise ``TypeError`` unless ``model`` is callable."""
    if not callable(model):
        raise TypeError(f"{factory}: model must be callable: Request -> Response | ModelError")


def check_seconds(factory: str, name: str, value: object, *, positive: bool = False) -> float:
    """Return ``value`` as seconds: a finite number, at least 0 (above 0 when ``positive``).

    Raises:
        TypeError: Not a number.
        ValueError: Negative (or 0 when ``positive``), infinite or NaN.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{factory}: {name} must be a number, not {type(value).__name__}")
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        bound = "positive" if positive else "at least 0"
        raise ValueError(f"{factory}: {name} must be finite and {bound}, got {value!r}")
    return float(value)


async def acall(model: Model, request: Request) -> Response | ModelError | Any:
    """Call ``model`` (each ``fallback_model`` leaf in turn), awaiting what is awaitable."""
    result: Any = None
    for leaf in _leaves(model):
        result = leaf(request)
        if inspect.isawaitable(result):
            result = await result
        if type(result) is not ModelError:
            return result
    return result


def call(model: Model, request: Request) -> Response | ModelError | Any:
    """Call a sync ``model`` (each ``fallback_model`` leaf in turn)."""
    result: Any = None
    for leaf in _leaves(model):
        result = leaf(request)
        if type(result) is not ModelError:
            return result
    return result
