"""Checks of what callers hand the runtime and its handles: ids, texts, deadlines, resumes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from praxo_actors._errors import JSONError, PraxoError
from praxo_actors.codes import RUNTIME_INVALID_INPUT, RUNTIME_UNKNOWN_AGENT
from praxo_actors.core import encode_json
from praxo_actors.runtime._kernel._agents import Agents
from praxo_actors.runtime._kernel._waits import check_deadline

__all__ = ["check_session", "check_text", "deadline_in_ns", "positive", "resume_document"]


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


def check_session(agents: Agents, session_id: str, agent: str | None) -> None:
    """Check the arguments of :meth:`Runtime.session` (see there).

    Raises:
        PraxoError: ``RUNTIME_INVALID_INPUT`` or ``RUNTIME_UNKNOWN_AGENT``.
    """
    if not isinstance(session_id, str) or not session_id or "\x00" in session_id:
        raise PraxoError(RUNTIME_INVALID_INPUT, "session id must be a non-empty str")
    check_text(session_id, "the session id")
    if agent is None:
        if not agents.view().factories:
            raise PraxoError(RUNTIME_UNKNOWN_AGENT, "no agent is registered")
    elif not isinstance(agent, str):
        raise PraxoError(RUNTIME_INVALID_INPUT, "agent must be a str or None")
    elif agent not in agents:
        raise PraxoError(RUNTIME_UNKNOWN_AGENT, f"no agent registered as {agent!r}")
