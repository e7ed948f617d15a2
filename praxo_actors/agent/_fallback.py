"""A model that falls back to another when the first returns a ``ModelError``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from praxo_actors.models import ModelError, Request, Response

__all__ = ["FallbackModel", "Model", "fallback_model"]

Model = Callable[[Request], Response | ModelError | Awaitable[Response | ModelError]]
"""A callable ``Request -> Response | ModelError``, or an ``async def`` one (an awaitable of one).

A model that returns anything else fails its run with a ``TypeError``; the type says so, so
mypy catches a model that returns a ``str``."""


class FallbackModel:
    """Call ``primary``; when it returns a :class:`ModelError`, call ``fallback`` instead.

    Either child may itself be a ``FallbackModel``. In the agent loop all attempts together
    count as one model call, and under :func:`~praxo_actors.agent.arun_agent` every child may be
    ``async def``. Called directly, a ``FallbackModel`` calls its children synchronously.
    Exceptions and malformed returns are not turned into fallbacks: they propagate.
    """

    __slots__ = ("attempts", "fallback", "primary")

    def __init__(self, primary: Model, fallback: Model) -> None:
        if not callable(primary) or not callable(fallback):
            raise TypeError("fallback_model children must be callable")
        self.primary = primary
        self.fallback = fallback
        # The leaf models in the order they are tried, flattened once so the loop can yield
        # one effect per attempt without recursion.
        self.attempts: tuple[Model, ...] = _leaves(primary) + _leaves(fallback)

    def __call__(self, request: Request) -> Any:
        """Try each child in order; return the first non-``ModelError`` result or the last error."""
        result: Any = None
        for model in self.attempts:
            result = model(request)
            if not isinstance(result, ModelError):
                return result
        return result

    def __repr__(self) -> str:
        return f"fallback_model({self.primary!r}, {self.fallback!r})"


def _leaves(model: Model) -> tuple[Model, ...]:
    return model.attempts if isinstance(model, FallbackModel) else (model,)


def fallback_model(primary: Model, fallback: Model) -> FallbackModel:
    """Return a model that calls ``fallback`` when ``primary`` returns a ``ModelError``.

    Raises:
        TypeError: A child is not callable.
    """
    return FallbackModel(primary, fallback)
