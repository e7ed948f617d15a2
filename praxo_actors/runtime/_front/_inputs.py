"""Checks of what callers hand a session handle: texts, deadlines, resume values."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from praxo_actors._errors import JSONError, PraxoError
from praxo_actors.codes import RUNTIME_INVALID_INPUT
from praxo_actors.core import encode_json
from praxo_actors.runtime._kernel._waits import check_deadline

__all__ = ["check_text", "deadline_in_ns", "positive", "resume_document"]


def check_text(text: str, what: str) -> None:
    """Refuse a str that cannot be encoded (a lone surrogate, e.g. from a JSON ``"\\ud800"``).

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT``.
    """
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise PraxoError(
                RUNTIME_INVALID_INPUT,
                f"{what} holds text that is not valid Unicode: {exc.reason}",
            ) from None


def positive(value: object) -> bool:
    """Return whether ``value`` is a finite number > 0 (not a bool)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def deadline_in_ns(deadline: float | None, now_ns: Callable[[], int]) -> int | None:
    """A deadline in seconds from now on the runtime's clock, in ns (``RUNTIME_INVALID_INPUT``
    for one that is not a finite number >= 0 or too large for the clock)."""
    if deadline is None:
        return None
    check_deadline(deadline, 0)  # checked before the clock is read
    return check_deadline(deadline, now_ns())


def resume_document(value: Any) -> str:
    """Return a resume value as JSON text (``RUNTIME_INVALID_INPUT`` if it is not JSON)."""
    try:
        return encode_json(value)
    except JSONError as exc:
        raise PraxoError(RUNTIME_INVALID_INPUT, f"a resume value must be JSON: {exc}") from None
