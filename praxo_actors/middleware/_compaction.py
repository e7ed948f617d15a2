"""Context compaction before each model call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from praxo_actors.models import Message

__all__ = ["Compaction", "Summarizer", "compaction"]

Summarizer = Callable[[list[Message]], Any]
"""Turns the messages being dropped into summary text (``async def`` under ``arun_agent``)."""


@dataclass(frozen=True, slots=True)
class Compaction:
    """Settings for :func:`~praxo_actors.core.compact_messages`, applied before each model call.

    When the history exceeds ``max_tokens`` (by the Core's estimate), the leading system messages
    and the last ``keep_last`` messages are kept and the middle is replaced by one summary
    message; the event ``context.compacted`` reports it, and the run's returned session keeps the
    compacted history. The estimate is a heuristic, not a tokenizer: it does not guarantee that
    a provider's context window is respected.
    """

    max_tokens: int
    keep_last: int = 6
    summarizer: Summarizer | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for name in ("max_tokens", "keep_last"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"compaction {name} must be an int, got {value!r}")
            if value < 0:
                raise ValueError(f"compaction {name} must not be negative, got {value}")
        if self.summarizer is not None and not callable(self.summarizer):
            raise TypeError("compaction summarizer must be callable or None")


def compaction(
    max_tokens: int, keep_last: int = 6, summarizer: Summarizer | None = None
) -> Compaction:
    """Return compaction settings for the agent loop.

    Args:
        max_tokens: Compact when the estimated total exceeds this.
        keep_last: Messages kept at the end (extended so a tool result keeps its call).
        summarizer: Called with the dropped middle; must return non-empty text, else the run
            fails with ``COMPACTION_SUMMARY_INVALID``. None: one line per message.

    Raises:
        TypeError: A count is not an ``int``, or ``summarizer`` is not callable.
        ValueError: A count is negative.
    """
    return Compaction(max_tokens, keep_last, summarizer)
