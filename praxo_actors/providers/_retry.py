"""``retrying``: call a model again after a transient ``ModelError``, with backoff and jitter."""

from __future__ import annotations

import random as _random
from collections.abc import Callable, Iterable
from typing import Any

from praxo_actors.agent import Model
from praxo_actors.models import ModelError, Request, Response
from praxo_actors.providers._calls import acall, call, check_model, check_seconds, is_async
from praxo_actors.providers._clock import Clock, SystemClock
from praxo_actors.providers._errors import MODEL_RATE_LIMITED, MODEL_UNAVAILABLE, retry_after

__all__ = ["RetryingModel", "retrying"]


class RetryingModel:
    """A model that calls ``model`` again on a ``ModelError`` whose code is in ``retry_on``.

    Made by :func:`retrying`; ``async def`` when ``model`` is.
    """

    __slots__ = ("attempts", "base_delay", "clock", "max_delay", "model", "random", "retry_on")

    def __init__(
        self,
        model: Model,
        attempts: int,
        base_delay: float,
        max_delay: float,
        retry_on: frozenset[str],
        clock: Clock,
        random: Callable[[], float],
    ) -> None:
        self.model = model
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.retry_on = retry_on
        self.clock = clock
        self.random = random

    def delay(self, attempt: int, error: ModelError) -> float | None:
        """Return the seconds to wait after failed ``attempt`` (1, 2, ...), or None to stop.

        Exponential backoff (``base_delay * 2 ** (attempt - 1)``, at most ``max_delay``) with
        jitter (between half of it and all of it), and never sooner than the server's
        retry-after. A retry-after beyond ``max_delay`` ends the retries at once: waiting
        less would be refused again, and waiting longer is past the caller's bound.
        """
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        wait: float = backoff * (0.5 + 0.5 * self.random())
        after = retry_after(error)
        if after is None:
            return wait
        if after > self.max_delay:
            return None
        return max(wait, after)

    def _again(self, attempt: int, result: Any) -> float | None:
        if type(result) is not ModelError or result.code not in self.retry_on:
            return None
        if attempt >= self.attempts:
            return None
        return self.delay(attempt, result)

    def __call__(self, request: Request) -> Response | ModelError | Any:
        """Call the model until it succeeds, fails for good, or the attempts run out."""
        attempt = 0
        while True:
            attempt += 1
            result = call(self.model, request)
            wait = self._again(attempt, result)
            if wait is None:
                return result
            self.clock.sleep(wait)

    def __repr__(self) -> str:
        return f"retrying({self.model!r}, attempts={self.attempts})"


class _AsyncRetryingModel(RetryingModel):
    __slots__ = ()

    async def __call__(self, request: Request) -> Response | ModelError | Any:
        """Call the model until it succeeds, fails for good, or the attempts run out."""
        attempt = 0
        while True:
            attempt += 1
            result = await acall(self.model, request)
            wait = self._again(attempt, result)
            if wait is None:
                return result
            await self.clock.asleep(wait)


def retrying(
    model: Model,
    attempts: int = 3,
    *,
    base_delay: float = 0.5,
    max_delay: float = 30.0,
    retry_on: Iterable[str] = (MODEL_RATE_LIMITED, MODEL_UNAVAILABLE),
    clock: Clock | None = None,
    random: Callable[[], float] | None = None,
) -> RetryingModel:
    """Return ``model`` retried on transient ``ModelError`` codes, with backoff and jitter.

    Any other return (a ``Response``, another code) comes back at once, and so does an
    exception. Compose it with :func:`~praxo_actors.agent.fallback_model` either way:
    ``fallback_model(retrying(a), b)`` retries ``a`` before falling back to ``b``;
    ``retrying(fallback_model(a, b))`` retries the whole chain. A streaming model's deltas
    of a failed attempt have already been sent when the next attempt begins.

    Args:
        model: The model to retry (sync or ``async``; the result is the same kind).
        attempts: Calls at most, the first included.
        base_delay: Seconds before the second call; doubled for each one after.
        max_delay: The longest wait; a retry-after beyond it ends the retries.
        retry_on: The codes worth another call.
        clock: Where the wrapper waits (the system's by default).
        random: Returns a float in [0, 1) for the jitter (``random.random`` by default).

    Raises:
        TypeError: ``model`` or ``random`` not callable, ``attempts`` not an int, a delay not
            a number, ``retry_on`` a str or holding a non-str.
        ValueError: ``attempts`` below 1, a negative delay, ``base_delay`` above
            ``max_delay``, or an empty ``retry_on``.
    """
    check_model("retrying", model)
    if isinstance(attempts, bool) or not isinstance(attempts, int):
        raise TypeError(f"retrying: attempts must be an int, not {type(attempts).__name__}")
    if attempts < 1:
        raise ValueError(f"retrying: attempts must be at least 1, got {attempts}")
    base = check_seconds("retrying", "base_delay", base_delay)
    most = check_seconds("retrying", "max_delay", max_delay)
    if base > most:
        raise ValueError(f"retrying: base_delay {base} exceeds max_delay {most}")
    if isinstance(retry_on, str) or not isinstance(retry_on, Iterable):
        raise TypeError(
            "retrying: retry_on must be a collection of codes, e.g. ('MODEL_UNAVAILABLE',)"
        )
    codes = frozenset(retry_on)
    if not all(isinstance(code, str) and code for code in codes):
        raise TypeError("retrying: every code in retry_on must be a non-empty str")
    if not codes:
        raise ValueError("retrying: retry_on must name at least one code")
    if random is not None and not callable(random):
        raise TypeError("retrying: random must be callable")
    kind = _AsyncRetryingModel if is_async(model) else RetryingModel
    return kind(
        model, attempts, base, most, codes, clock or SystemClock(), random or _random.random
    )
